//! The one language enum every etip crate uses (miners, build, runner, scores).

use serde::{Deserialize, Serialize};

/// Programming language of a repository, a candidate or an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// Java sources (`.java`), Maven layout.
    Java,
    /// Python sources (`.py`).
    Python,
}

impl Language {
    /// The lowercase name used in files and on the command line (`java`, `python`).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Java => "java",
            Language::Python => "python",
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Language {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "java" => Ok(Language::Java),
            "python" => Ok(Language::Python),
            other => Err(format!(
                "unknown language {other:?} (expected java or python)"
            )),
        }
    }
}
