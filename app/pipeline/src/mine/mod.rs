//! The mining stages: [`local`] turns one repository's history into ETIP candidates; [`github`]
//! searches GitHub for repositories and mines each; [`post`] is the pass both run over mined
//! candidates when services are at hand (issues linked through GitHub, answers from a
//! classifier). The settings both share — rule 1's path policy ([`PathOptions`]) and how a worker
//! process is started — are here.

pub mod github;
pub mod local;
pub mod post;

pub use etip_mine_git::WorkerCommand;

use crate::InputError;

/// Rule 1's path policy as a user states it (docs/rules.md §2.2), shared by `mine local` and
/// `mine github`: what is not given here is taken from a configuration file's, then the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathOptions {
    /// `code` (the default), `strict` or `jeto` (`--path-rule`).
    pub path_rule: Option<String>,
    /// More paths to set aside, as globs (`--ignore`).
    pub ignore: Vec<String>,
    /// Set aside only the `ignore` globs (`--no-default-ignores`).
    pub no_default_ignores: bool,
    /// Python: Cython and C/C++ sources count as code (`--compiled-extensions`).
    pub compiled_extensions: bool,
}

impl PathOptions {
    /// The policy these options ask for (`file` fills what they do not say); an unknown rule or a
    /// glob that does not parse is bad input.
    pub fn policy(&self, file: &PathOptions) -> Result<etip_mine_git::PathPolicy, InputError> {
        use etip_mine_git::{PathPolicy, PathRule};
        let rule = match self.path_rule.as_deref().or(file.path_rule.as_deref()) {
            None => PathRule::Code,
            Some(name) => PathRule::from_name(name).ok_or_else(|| {
                InputError(format!(
                    "unknown path rule {name:?}: use code, strict or jeto"
                ))
            })?,
        };
        let mut ignore = self.ignore.clone();
        ignore.extend(file.ignore.iter().cloned());
        let policy = PathPolicy {
            rule,
            default_ignores: rule == PathRule::Code
                && !(self.no_default_ignores || file.no_default_ignores),
            ignore,
            compiled_extensions: self.compiled_extensions || file.compiled_extensions,
        };
        // Both languages: the same globs and the same strict-with-globs conflict.
        etip_mine_git::policy::PathMatcher::new(etip_core::Language::Python, &policy)
            .map_err(|e| InputError(e.to_string()))?;
        Ok(policy)
    }
}

/// Refuses an output file whose folder does not exist (`flag` names it).
fn check_out_folder(out: &std::path::Path, flag: &str) -> Result<(), InputError> {
    match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(InputError(format!(
            "the folder of {flag} {} does not exist",
            out.display()
        ))),
        _ => Ok(()),
    }
}
