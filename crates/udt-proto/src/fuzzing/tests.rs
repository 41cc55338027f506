//! Stable drivers: every fuzz body on random inputs (the wire body also has structured
//! drivers in `wire/proptests.rs`).

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

proptest! {
    #[test]
    fn congestion_ops_on_random_bytes(data in vec(any::<u8>(), 0..3_000)) {
        congestion_ops(&data);
    }
}

#[test]
fn congestion_ops_on_degenerate_inputs() {
    congestion_ops(&[]);
    congestion_ops(&[1]);
    congestion_ops(&[0xFF; 4096]);
    congestion_ops(&[0x00; 4096]);
}
