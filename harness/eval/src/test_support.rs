//! Helpers of this crate's unit tests.

use etip_core::measure::Version;
use etip_measure::protocol::{RoundResult, SideResult};
use etip_records::measure::RoundSummary;

/// Round `k` (round 0 the warm-up) with these sides, the original run first; its summary's times
/// and exit codes are placeholders.
pub(crate) fn round(k: usize, sides: Vec<SideResult>) -> RoundResult {
    RoundResult {
        summary: RoundSummary {
            round: k,
            warmup: k == 0,
            first: Version::Original,
            sequence: Vec::new(),
            started: String::new(),
            wall_secs: 2.0,
            command_secs: vec![1.0, 1.0],
            exit_codes: vec![Some(0), Some(0)],
            pressure: None,
            repeats: 0,
        },
        sides,
    }
}
