//! `etip eval` and `etip eval-test` as a library: agent patches and generated tests evaluated on
//! built ETIPs, on the timing engine of `etip measure` (`etip-measure`).
//!
//! - [`predictions`]: SWE-bench's prediction format, and the generated-test records.
//! - [`patch::check`]: what must hold before anything runs — refuses, each with its recorded
//!   category, an empty patch, a malformed diff, binary hunks, paths that leave the tree, and
//!   changes to protected files (tests, build descriptors, benchmark and test-infrastructure
//!   files) unless test changes are allowed.
//! - [`candidate`]: the candidate's own container of the instance image; the patch applied to
//!   its copy of a version's tree, which is rebuilt and smoke-checked.
//! - [`evaluate`]: one agent patch, timed against the original and the reference (three sides).
//! - [`generated`]: one generated test, applied to the original and the reference and timed there:
//!   is it an ETIP detector test?
//! - [`gold`]: each ETIP's own patch, for the harness's self-check.
//! - [`repeat_check`]: the dynamic check of state that survives repeats (`cross_repeat_state`):
//!   each repeating workload also timed with one call per process.

pub mod candidate;
pub mod evaluate;
pub mod generated;
pub mod gold;
pub mod gso_check;
pub mod patch;
pub mod predictions;
pub mod repeat_check;
pub mod sandbox;
#[cfg(test)]
pub(crate) mod test_support;
