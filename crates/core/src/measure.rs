//! The two versions of an ETIP, as every stage names them: the original and the patched version.
//! The measurement records (`measurements.jsonl`) are `etip_records::measure`'s.

use serde::{Deserialize, Serialize};

/// One of the two versions of an ETIP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Version {
    Original,
    Patched,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Original => "original",
            Version::Patched => "patched",
        }
    }

    pub fn other(self) -> Version {
        match self {
            Version::Original => Version::Patched,
            Version::Patched => Version::Original,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
