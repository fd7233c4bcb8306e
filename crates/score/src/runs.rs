//! Which runs of a benchmark compete and what they are called: the expert's own patches and an
//! older copy of a run are set apart ([`Role`], [`roles`]), and the published reports' file-name
//! decorations are removed for display ([`short_name`]). The audit ([`crate::audit`]) records
//! them per submission; the boards ([`crate::board`]) rank the competitors.

use serde::Serialize;

/// Whether a submission competes in the ranking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Role {
    /// An agent's submission: ranked.
    Ranked,
    /// The expert (reference) patches scored as a submission (`eval_report_gold`): the yardstick,
    /// not a competitor.
    Gold,
    /// An older copy of another submission of the benchmark (its name is the other's plus `_old`).
    Duplicate {
        /// The submission it is a copy of.
        of: String,
    },
}

impl Role {
    /// Whether the submission is ranked.
    pub fn is_ranked(&self) -> bool {
        matches!(self, Role::Ranked)
    }
}

/// The file-name decorations of the published reports, removed for display: SWE-fficiency's
/// `eval_report_` prefix and OpenHands' run suffix `_maxiter_100_N_v0.51.1-no-hint-run_1`; a
/// SWE-Perf agent run `default_sweperf_<agent>__<provider>--<model>__t-…` becomes
/// `<model> (sweperf)`. Other names are kept as they are.
pub fn short_name(name: &str) -> String {
    let base = name.strip_prefix("eval_report_").unwrap_or(name);
    let (base, old) = match base.strip_suffix("_old") {
        Some(b) => (b, true),
        None => (base, false),
    };
    let mut short = if let Some(at) = base.find("_maxiter_") {
        base[..at].to_owned()
    } else if let Some(rest) = base.strip_prefix("default_sweperf_") {
        // <agent>__<provider>--<model>__t-…
        let model = rest
            .split("__")
            .nth(1)
            .map(|m| m.rsplit("--").next().unwrap_or(m))
            .filter(|m| !m.is_empty());
        match model {
            Some(m) => format!("{m} (sweperf)"),
            None => base.to_owned(),
        }
    } else {
        base.to_owned()
    };
    if short.is_empty() {
        return name.to_owned();
    }
    if old {
        short.push_str(" (old)");
    }
    short
}

/// The role of each submission of one benchmark (given by name, in order).
pub fn roles(names: &[&str]) -> Vec<Role> {
    names
        .iter()
        .map(|n| {
            let base = n.strip_prefix("eval_report_").unwrap_or(n);
            if base == "gold" {
                return Role::Gold;
            }
            if let Some(of) = n.strip_suffix("_old")
                && names.contains(&of)
            {
                return Role::Duplicate { of: of.to_owned() };
            }
            Role::Ranked
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_file_names_shorten_to_model_names() {
        for (name, short) in [
            (
                "eval_report_claude-opus-4-5-20251101_maxiter_100_N_v0.61.0-no-hint-run_1",
                "claude-opus-4-5-20251101",
            ),
            (
                "eval_report_qwen3-coder-plus-2025-09-23_maxiter_100_N_v0.51.1-no-hint-run_1_old",
                "qwen3-coder-plus-2025-09-23 (old)",
            ),
            (
                "eval_report_default_sweperf_openai__openai--gpt-5-mini__t-1.00__p-1.00__c-1.00___swefficiency_full_test",
                "gpt-5-mini (sweperf)",
            ),
            ("eval_report_cursor-cli-composer-1", "cursor-cli-composer-1"),
            ("eval_report_gold", "gold"),
            ("gpt-5.json-like name", "gpt-5.json-like name"),
            ("eval_report_", "eval_report_"),
            ("default_sweperf_", "default_sweperf_"),
        ] {
            assert_eq!(short_name(name), short, "{name}");
        }
    }

    #[test]
    fn gold_and_old_copies_are_not_ranked() {
        let names = [
            "eval_report_gold",
            "eval_report_a",
            "eval_report_a_old",
            "b_old",
        ];
        assert_eq!(
            roles(&names),
            [
                Role::Gold,
                Role::Ranked,
                Role::Duplicate {
                    of: "eval_report_a".into()
                },
                // No `b` among the submissions: an `_old` name alone is an ordinary run.
                Role::Ranked,
            ]
        );
    }
}
