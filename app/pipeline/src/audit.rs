//! The `audit` stage: diagnostics that show when a leaderboard's aggregate is fragile — tail
//! weight of the harmonic mean, bounded penalty, median SR, test-failure tolerance, GSO-style
//! rescoring, ranking agreement and coverage — with the ranked boards per benchmark, and the HTML
//! page when asked for one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use etip_score::audit::{self, Audit, AuditParams};
use etip_score::board::{self, Board};
use etip_score::{clip, input};

use crate::output::{self, Named};
use crate::{InputError, input_error};

/// An `audit` run as the user asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditConfig {
    /// Result files, one submission each.
    pub files: Vec<PathBuf>,
    /// Floor on SR for the harmonic mean whose tail weight is reported.
    pub floor: f64,
    /// Raised floor of the bounded-penalty harmonic mean.
    pub bounded_floor: f64,
    /// A failing patch counts correct when it passes at least 1 - tolerance of its tests.
    pub tolerance: f64,
    /// SR threshold of the GSO-style gate applied to SWE-fficiency outputs.
    pub gso_threshold: f64,
    /// A TOML file mapping submission names to model names.
    pub aliases: Option<PathBuf>,
    /// Where to write the HTML report, if anywhere.
    pub html: Option<PathBuf>,
}

/// What an audit returns: the diagnostics, the ranked boards and the parameters they used.
#[derive(Debug)]
pub struct Audited {
    /// The diagnostics of every submission, the rankings compared and the coverage.
    pub audit: Audit,
    /// One ranked board per benchmark.
    pub boards: Vec<Board>,
    /// The parameters, aliases included.
    pub params: AuditParams,
}

/// Reads an aliases file (bounded like every input; any failure to open or read it is bad input).
fn read_aliases(path: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let text = input::read_text(path).map_err(input_error)?;
    toml::from_str::<BTreeMap<String, String>>(&text).map_err(|e| {
        InputError(format!(
            "{}: not an aliases file ({}); expected lines like \"submission name\" = \"model name\"",
            path.display(),
            clip::foreign(e.message().trim())
        ))
        .into()
    })
}

/// Refuses, before any work, a report that would replace an input or anything but a file.
fn check_html(c: &AuditConfig, html: &Path) -> anyhow::Result<()> {
    let mut paths: Vec<Named> = c.files.iter().map(|f| Named::reads("FILE", f)).collect();
    if let Some(a) = &c.aliases {
        paths.push(Named::reads("--aliases", a));
    }
    paths.push(Named::writes("--html", html));
    output::distinct(&paths)?;
    output::check(html)?;
    Ok(())
}

/// Audits the submissions of `c.files`, ranks them per benchmark and writes the HTML report when
/// `c.html` names one.
pub fn audit(c: &AuditConfig) -> anyhow::Result<Audited> {
    let mut params = AuditParams {
        floor: c.floor,
        bounded_floor: c.bounded_floor,
        tolerance: c.tolerance,
        gso_sr_threshold: c.gso_threshold,
        aliases: BTreeMap::new(),
    };
    params.validate().map_err(input_error)?;
    if let Some(html) = &c.html {
        check_html(c, html)?;
    }
    if let Some(path) = &c.aliases {
        params.aliases = read_aliases(path)?;
    }
    // Refuses a call without submissions (only GSO manifests), as `score` does.
    let groups = input::load_grouped(&c.files).map_err(input_error)?;
    if let Some(path) = &c.aliases {
        // Checked here to name the file; audit() checks them again for library callers.
        audit::check_aliases(&groups, &params.aliases)
            .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    }
    let result = audit::audit(&groups, &params).map_err(input_error)?;
    let boards = board::boards(&result, params.gso_sr_threshold);
    if let Some(path) = &c.html {
        output::write(path, &etip_report::audit::html(&result, &boards, &params))?;
        tracing::info!("wrote {}", path.display());
    }
    Ok(Audited {
        audit: result,
        boards,
        params,
    })
}
