//! The flag groups several commands share, each declared once and flattened into the commands
//! (`#[command(flatten)]`): the sign test's parameters ([`SignArgs`]), how results are printed
//! ([`OutputArgs`]) and the configuration file ([`ConfigArgs`]).
//!
//! `--out` is declared by each command: it is a folder for some, a file for others, required
//! or defaulted differently, and its help lists what that command writes there.

use super::format::FormatArg;
use etip_score::param;
use etip_stats::SignTestConfig;
use std::path::PathBuf;

/// The sign test's parameters (JETO's rule): `etip score --rule jeto` scores with them, `etip
/// measure`, `eval` and `eval-test` give their verdicts with them. Values starting with '-' are
/// taken as values (`--min-impr -1`), so that the range check (etip_score::param) reports them.
#[derive(Debug, Clone, clap::Args)]
pub struct SignArgs {
    /// Minimum relative improvement of a round to count as a win in the sign test (JETO's
    /// rule), in [0, 1).
    #[arg(long, default_value_t = SignTestConfig::default().min_impr, allow_hyphen_values = true,
          value_parser = |s: &str| param::MIN_IMPR.parse(s))]
    pub min_impr: f64,
    /// Significance threshold of the sign test (strict: p < p-val), in (0, 0.5].
    #[arg(long, default_value_t = SignTestConfig::default().p_val, allow_hyphen_values = true,
          value_parser = |s: &str| param::P_VAL.parse(s))]
    pub p_val: f64,
    /// The sign test's conservative setting, JETO's (min-impr 0.1, p-val 0.05); overrides
    /// --min-impr and --p-val.
    #[arg(long)]
    pub conservative: bool,
}

/// How a command prints its results on stdout.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct OutputArgs {
    /// How to print the results.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// The configuration file's build settings.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Build configuration (TOML; keys not set keep their defaults; see harness/build/README.md).
    /// `measure`, `select`, `eval` and `eval-test` need the one the ETIPs were built with.
    #[arg(long)]
    pub config: Option<PathBuf>,
}
