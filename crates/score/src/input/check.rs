//! Checks shared by the readers: numbers, instance ids, and runtimes together with the sums and
//! ratios the rules form from them. Every error names the file and the line.
//!
//! A runtime must be finite and at least [`MIN_RUNTIME`], the smallest normal double: a subnormal
//! runtime such as `5e-324` loses its precision in the rules' arithmetic (`(1 - min_impr)·t` rounds
//! back to `t`, so JETO counted equal runtimes as wins of both versions). Zero is refused too, except
//! in the measurements of `etip measure`, where it is a timer reading (a class too fast to time).
//! Means, per-round totals and ratios of valid runtimes can still overflow to infinity or underflow
//! to zero (`1e300 / 1e-300`); those are refused as well, so that no rule ever sees them.

use crate::clip::quote;
use crate::error::{Result, ScoreError};
use etip_records::results::{PerTestMeans, TaskResult, TestRuns};
use std::collections::BTreeMap;
use std::path::Path;

/// The smallest runtime accepted (seconds or any other unit): `f64::MIN_POSITIVE`, about 2.2e-308.
pub const MIN_RUNTIME: f64 = f64::MIN_POSITIVE;

/// A number for an error message: in scientific notation when very small or very large (`5e-324`,
/// `1e308`), as `{}` writes it otherwise.
pub(crate) fn show(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-6..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A place in a file, for errors.
#[derive(Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) path: &'a Path,
    pub(crate) line: usize,
}

impl At<'_> {
    pub(crate) fn err(&self, message: String) -> ScoreError {
        ScoreError::Malformed {
            path: self.path.to_path_buf(),
            line: self.line,
            message,
        }
    }
}

/// Checks a number read from an input: finite and not negative.
pub(crate) fn check_number(path: &Path, line: usize, what: &str, value: f64) -> Result<f64> {
    let at = At { path, line };
    if !value.is_finite() {
        return Err(at.err(format!("{what} is {value}, expected a finite number")));
    }
    if value < 0.0 {
        return Err(at.err(format!("{what} is {}, expected a number >= 0", show(value))));
    }
    Ok(value)
}

/// Checks a ratio read from an input (a speedup): finite and > 0.
pub(crate) fn check_positive(at: At, what: &str, value: f64) -> Result<f64> {
    check_number(at.path, at.line, what, value)?;
    if value == 0.0 {
        return Err(at.err(format!("{what} is 0, expected a positive ratio")));
    }
    Ok(value)
}

/// Checks timed runs: each finite and >= [`MIN_RUNTIME`], or exactly 0 when `zero_ok`. `what`
/// names one run (`test "t" base runtime`).
pub(crate) fn check_runtimes(
    at: At,
    what: &dyn Fn() -> String,
    xs: &[f64],
    zero_ok: bool,
) -> Result<()> {
    for (i, &x) in xs.iter().enumerate() {
        let bad = |expected: &str| {
            at.err(format!(
                "{} is {} (run {} of {}), expected {expected}",
                what(),
                show(x),
                i + 1,
                xs.len()
            ))
        };
        if !x.is_finite() || x < 0.0 {
            return Err(bad(if zero_ok {
                "a finite number >= 0"
            } else {
                "a finite number > 0"
            }));
        }
        if x == 0.0 && !zero_ok {
            return Err(bad("a finite number > 0 (a zero runtime was not measured)"));
        }
        if x != 0.0 && x < MIN_RUNTIME {
            return Err(bad(&format!(
                "{}at least {MIN_RUNTIME:e}, the smallest normal double: a subnormal runtime \
                 loses its precision in the rules' arithmetic",
                if zero_ok { "0 or " } else { "" }
            )));
        }
    }
    Ok(())
}

/// Mean of runtimes that were checked, refusing a sum that overflows (`None` for no runtimes).
pub(crate) fn checked_mean(at: At, what: &dyn Fn() -> String, xs: &[f64]) -> Result<Option<f64>> {
    if xs.is_empty() {
        return Ok(None);
    }
    let sum: f64 = xs.iter().sum();
    if !sum.is_finite() {
        return Err(at.err(format!(
            "the {} runtimes add up to more than the largest double: their mean overflows",
            what()
        )));
    }
    Ok(Some(sum / xs.len() as f64))
}

/// `a / b` of two checked positive values, refusing a ratio that overflows to infinity or
/// underflows to 0.
pub(crate) fn checked_ratio(at: At, what: &dyn Fn() -> String, a: f64, b: f64) -> Result<f64> {
    let r = a / b;
    if !r.is_finite() {
        return Err(at.err(format!(
            "{} = {} / {} overflows to infinity",
            what(),
            show(a),
            show(b)
        )));
    }
    if r == 0.0 && a != 0.0 {
        return Err(at.err(format!(
            "{} = {} / {} underflows to 0",
            what(),
            show(a),
            show(b)
        )));
    }
    Ok(r)
}

/// Sum of checked values, refusing an overflow.
fn checked_sum(at: At, what: &dyn Fn() -> String, xs: impl Iterator<Item = f64>) -> Result<f64> {
    let sum: f64 = xs.sum();
    if sum.is_finite() {
        Ok(sum)
    } else {
        Err(at.err(format!("{} overflows to infinity", what())))
    }
}

/// The runtimes of a task result and every sum and ratio the rules form from them: per-test means,
/// the SWE-fficiency totals and speedups, GSO's per-test ratios and JETO's per-round totals.
pub(crate) fn check_task_runtimes(at: At, task: &TaskResult) -> Result<()> {
    for test in &task.tests {
        check_test(at, task, test)?;
    }
    if !task.tests.is_empty() {
        let means =
            |f: fn(&TestRuns) -> &Vec<f64>, side: &'static str| -> Result<Option<Vec<f64>>> {
                task.tests
                    .iter()
                    .map(|t| checked_mean(at, &|| format!("test {} {side}", quote(&t.name)), f(t)))
                    .collect()
            };
        let base = means(|t| &t.base, "base")?;
        let patched = means(|t| &t.patched, "patched")?;
        let reference = means(|t| &t.reference, "reference")?;
        let total = |m: &[f64], side: &str| {
            checked_sum(
                at,
                &|| format!("the sum of the {side} means"),
                m.iter().copied(),
            )
        };
        if let Some(b) = &base {
            let bt = total(b, "base")?;
            for (other, side) in [(&patched, "patched"), (&reference, "reference")] {
                if let Some(o) = other {
                    checked_ratio(
                        at,
                        &|| format!("the speedup base / {side}"),
                        bt,
                        total(o, side)?,
                    )?;
                }
            }
            if let (Some(p), Some(r)) = (&patched, &reference) {
                let means = PerTestMeans {
                    base: b.clone(),
                    patch: p.clone(),
                    commit: r.clone(),
                };
                check_mean_ratios(at, "test means", &means)?;
            }
        }
        check_round_totals(at, &task.tests)?;
    }
    if let Some(m) = &task.per_test_means {
        check_per_test_means(at, "per_test_means", m)?;
    }
    Ok(())
}

fn check_test(at: At, task: &TaskResult, test: &TestRuns) -> Result<()> {
    let name = quote(&test.name);
    for (side, runs) in [
        ("base", &test.base),
        ("patched", &test.patched),
        ("reference", &test.reference),
    ] {
        check_runtimes(at, &|| format!("test {name} {side} runtime"), runs, false)?;
    }
    if task.correct == Some(true) && test.passed {
        for (side, runs, other) in [
            ("base", &test.base, &test.patched),
            ("patched", &test.patched, &test.base),
        ] {
            if runs.is_empty() {
                return Err(at.err(format!(
                    "the {side} runtimes of test {name} are empty ({} on the other version); a \
                     passing test of a correct patch needs the runtimes of both versions",
                    other.len()
                )));
            }
        }
    }
    Ok(())
}

/// JETO adds the runtimes of all classes round by round: those sums must stay finite.
pub(crate) fn check_round_totals(at: At, tests: &[TestRuns]) -> Result<()> {
    let rounds = tests
        .iter()
        .map(|t| t.base.len().max(t.patched.len()))
        .max()
        .unwrap_or(0);
    let mut totals = vec![(0.0f64, 0.0f64); rounds];
    for t in tests {
        for (k, &x) in t.base.iter().enumerate() {
            totals[k].0 += x;
        }
        for (k, &x) in t.patched.iter().enumerate() {
            totals[k].1 += x;
        }
    }
    match totals
        .iter()
        .position(|(o, p)| !o.is_finite() || !p.is_finite())
    {
        Some(k) => Err(at.err(format!(
            "the runtimes of round {} add up to more than the largest double over the tests",
            k + 1
        ))),
        None => Ok(()),
    }
}

/// Per-test means (GSO's): equal lengths, runtimes, their means and GSO's per-test ratios.
pub(crate) fn check_per_test_means(at: At, what: &str, m: &PerTestMeans) -> Result<()> {
    let n = m.base.len();
    if m.patch.len() != n || m.commit.len() != n || n == 0 {
        return Err(at.err(format!(
            "{what} has lists of different or zero lengths (base {}, patch {}, commit {})",
            m.base.len(),
            m.patch.len(),
            m.commit.len()
        )));
    }
    for (side, list) in [
        ("base", &m.base),
        ("patch", &m.patch),
        ("commit", &m.commit),
    ] {
        check_runtimes(at, &|| format!("{what}.{side} runtime"), list, false)?;
        checked_mean(at, &|| format!("{what}.{side}"), list)?;
    }
    check_mean_ratios(at, what, m)
}

/// GSO's per-test ratios base/patch and patch/commit, and their sums.
fn check_mean_ratios(at: At, what: &str, m: &PerTestMeans) -> Result<()> {
    let mut logs = 0.0f64;
    let mut inverse = 0.0f64;
    for (i, ((&b, &p), &c)) in m.base.iter().zip(&m.patch).zip(&m.commit).enumerate() {
        let test = i + 1;
        logs += checked_ratio(
            at,
            &|| format!("{what}: base / patch of test #{test}"),
            b,
            p,
        )?
        .ln();
        inverse += checked_ratio(
            at,
            &|| format!("{what}: patch / commit of test #{test}"),
            p,
            c,
        )?;
    }
    if !inverse.is_finite() || !logs.is_finite() {
        return Err(at.err(format!(
            "{what}: the sum of the per-test ratios overflows to infinity"
        )));
    }
    Ok(())
}

/// Records instance ids and reports the first duplicate.
pub(crate) struct IdSet(BTreeMap<String, usize>);

impl IdSet {
    pub(crate) fn new() -> Self {
        IdSet(BTreeMap::new())
    }

    pub(crate) fn insert(&mut self, path: &Path, line: usize, id: &str) -> Result<()> {
        self.insert_field(path, line, "instance_id", id)
    }

    /// As [`IdSet::insert`], naming the id field `field` in errors.
    pub(crate) fn insert_field(
        &mut self,
        path: &Path,
        line: usize,
        field: &str,
        id: &str,
    ) -> Result<()> {
        let at = At { path, line };
        if id.trim().is_empty() {
            return Err(at.err(format!("empty {field}")));
        }
        if let Some(first) = self.0.insert(id.to_owned(), line) {
            return Err(at.err(format!(
                "duplicate {field} {} (first seen on line {first})",
                quote(id)
            )));
        }
        Ok(())
    }
}
