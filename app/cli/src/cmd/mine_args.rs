//! The arguments `mine local` and `mine github` share: the language, the summary format, rule 1's
//! path flags, and how a worker process of this binary is started.

use etip_core::candidate::Language;
use etip_pipeline::mine::{PathOptions, WorkerCommand};

/// Language profile.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LangArg {
    Java,
    Python,
}

impl From<LangArg> for Language {
    fn from(l: LangArg) -> Language {
        match l {
            LangArg::Java => Language::Java,
            LangArg::Python => Language::Python,
        }
    }
}

/// Summary format.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// How `mine local` and `mine github` print their summary.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SummaryArgs {
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// Rule 1's path policy, shared by `mine local` and `mine github` (docs/rules.md §2.2).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PathArgs {
    /// Rule 1: `code` sets documentation, changelogs and repository metadata aside (listed in a
    /// candidate's `ignored_files`); `strict` (alias `jeto`) rejects a commit that changes any
    /// non-source file, as JETO did [default: code].
    #[arg(long, value_name = "RULE", value_parser = ["code", "strict", "jeto"])]
    pub path_rule: Option<String>,
    /// Also set aside paths matching GLOB (repeatable; `**` crosses directories, `*` does not),
    /// e.g. 'benchmarks/**' for an asv suite. Test files still reject the commit.
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Set aside only the --ignore globs, not the default documentation, changelog and metadata
    /// paths.
    #[arg(long)]
    pub no_default_ignores: bool,
    /// Python: count Cython (.pyx/.pxd/.pxi), C/C++ sources and their build descriptors
    /// (meson.build, CMakeLists.txt) as code, listed in a candidate's `extension_files`; they
    /// are semantic unless only comments or whitespace changed.
    #[arg(long)]
    pub compiled_extensions: bool,
}

impl From<&PathArgs> for PathOptions {
    fn from(a: &PathArgs) -> PathOptions {
        PathOptions {
            path_rule: a.path_rule.clone(),
            ignore: a.ignore.clone(),
            no_default_ignores: a.no_default_ignores,
            compiled_extensions: a.compiled_extensions,
        }
    }
}

/// How `mine` starts a worker process: this binary's hidden `mine worker`.
pub fn worker_command() -> Option<WorkerCommand> {
    std::env::current_exe().ok().map(|program| WorkerCommand {
        program,
        args: vec!["mine".into(), "worker".into()],
    })
}
