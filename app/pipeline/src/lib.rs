//! etip's application layer: the pipeline's stages as library calls.
//!
//! Each stage — mine (local and GitHub), build, select, measure, eval, eval-test, score, audit,
//! demo — is one module that takes a typed configuration, the executor and store it works with
//! and a progress reporter, owns its output folder, and returns typed records. The `etip` binary
//! parses arguments into those configurations, calls one stage and renders what it returns; the
//! demo calls the stages directly.
//!
//! Work is described as units ([`etip_core::unit`]) run by a backend chosen once per command
//! ([`backend::BackendChoice`]; worker threads of this process today) and recorded in the store's
//! ledger, so that a finished unit is never run twice and an interrupted one runs again. Build,
//! select, measure, eval and eval-test all run their units on that one backend loop; `units`
//! holds what they share (content keys, the halt of a stage's remaining units, input order).
//!
//! This is the only crate that joins the miners (`miners/`) and the harness (`harness/`). Like
//! gitoxide's `gitoxide-core`, it reports failures as error chains (`anyhow`) that carry the
//! libraries' typed errors; [`InputError`] marks the failures a user caused with bad input (the
//! binary exits with 2 for those, 1 for every other failure).
//!
//! The stages: [`mine::local`], [`mine::github`], [`classify`], [`build`], [`select`],
//! [`measure`], [`eval`], [`eval_test`], [`score`], [`audit`] and [`demo`], which runs them all on
//! the embedded fixtures; [`base_image`] and [`clean`] manage etip's images, [`config`] writes the
//! configuration file, and the AST [`labels`] of evaluated patches join the miners' syntax with
//! the harness. The executor is chosen in one place, [`executor`]. The
//! rules every stage follows for the files it writes and reads are [`output`] and [`input`]; a
//! stage reports how far it is through [`progress::Progress`] and reaches networks through
//! [`services`].

pub mod audit;
pub mod backend;
pub mod base_image;
pub mod build;
pub mod classify;
pub mod clean;
pub mod config;
pub mod demo;
pub mod disk;
pub mod error;
pub mod eval;
pub mod eval_test;
pub mod executor;
pub mod export;
pub mod hack_check;
pub mod import;
pub mod input;
pub mod labels;
pub mod measure;
pub mod mine;
pub mod output;
pub mod progress;
pub mod records;
pub mod runtime;
pub mod sandbox;
pub mod score;
pub mod select;
pub mod services;
pub mod swarm;
pub mod timing;
pub mod unit_run;
mod units;

pub use error::{InputError, input_error};
pub use executor::{ExecutorChoice, ExecutorKind};
pub use progress::{Done, NoProgress, PhaseProgress, Progress, Silent};
