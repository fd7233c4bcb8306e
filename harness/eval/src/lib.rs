//! `etip eval` as a library: agent patches (and generated tests) evaluated on built ETIPs.
//!
//! This crate sits beside `etip-runner` and will drive it (apply, build, smoke check, timed rounds
//! of original, candidate and reference). It starts with what must happen before anything runs:
//! [`patch::check`], which reads a prediction's patch and refuses, each with its recorded category,
//! an empty patch, a malformed diff, binary hunks, paths that leave the tree, and changes to
//! protected files (tests, build descriptors, benchmark and test-infrastructure files) unless
//! test changes are allowed; and [`predictions::parse`], SWE-bench's prediction format.

pub mod candidate;
pub mod evaluate;
pub mod gold;
pub mod patch;
pub mod predictions;
