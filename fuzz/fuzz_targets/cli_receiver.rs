//! Fuzz target: `udt_cli::fuzzing::cli_receiver` (the property is documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| udt_cli::fuzzing::cli_receiver(data));
