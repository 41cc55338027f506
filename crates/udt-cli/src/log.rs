//! Diagnostics on stderr: `UDT_LOG` selects the libraries' `tracing` events to print, with
//! the filter syntax of `RUST_LOG` (`udt_proto=debug`, `udt_proto::congestion=trace,udt=info`).
//!
//! Off unless the variable is set, so nothing is printed or paid for by default. The events
//! say what the counters cannot: why a congestion controller changed its mode (the model
//! entering CUBIC mode beside a loss-based flow, a back-off, a probe of the RTT), with the
//! figures it decided on. Timestamps are seconds since the process started, to line them up
//! with `udt perf`'s intervals.

use tracing_subscriber::fmt::time::uptime;
use tracing_subscriber::EnvFilter;

use crate::UsageError;

/// The variable that holds the filter.
pub const VAR: &str = "UDT_LOG";

/// Installs the stderr subscriber if `UDT_LOG` is set and not empty; a filter that does not
/// parse is a usage error naming the variable.
pub fn init_from_env() -> anyhow::Result<()> {
    let Some(spec) = std::env::var_os(VAR).filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let spec = spec
        .into_string()
        .map_err(|_| UsageError(format!("{VAR} is not valid UTF-8")))?;
    let filter = EnvFilter::builder().parse(&spec).map_err(|e| {
        UsageError(format!(
            "{VAR}={spec:?} is not a filter ({e}); try {VAR}=udt_proto=debug"
        ))
    })?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_timer(uptime())
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot install the {VAR} logger: {e}"))
}
