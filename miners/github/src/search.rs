//! Repository search with SPEC 2's criteria (language, stars, pushed after, not archived, not a
//! fork), split into pushed-date windows so that no query meets the search API's cap of 1,000
//! results: a window whose `total_count` exceeds the cap is cut in two, down to single days.

use crate::{Calls, GhError, GitHub};
use etip_store::Store;
use serde_json::Value;

/// The search API returns at most this many results per query.
pub const SEARCH_CAP: u64 = 1000;

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criteria {
    /// GitHub's language name (`Java`, `Python`).
    pub language: String,
    pub min_stars: u64,
    /// Pushed on or after this day (days since 1970-01-01).
    pub pushed_from: i64,
    /// Pushed on or before this day.
    pub pushed_to: i64,
    /// Stop after this many repositories (the most starred of each window first).
    pub max_repos: usize,
}

/// A repository the search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// `owner/name`.
    pub full_name: String,
    pub clone_url: String,
    pub stars: u64,
    pub default_branch: Option<String>,
}

/// The search's record: windows asked, windows cut, repositories found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchLog {
    /// (from, to, total_count) of every window asked, in order.
    pub windows: Vec<(String, String, u64)>,
    /// Windows cut in two because they held more than the cap.
    pub bisected: u64,
    /// Windows still over the cap at a single day: their results past the cap are lost.
    pub truncated: Vec<String>,
}

/// `YYYY-MM-DD` of a day number (days since 1970-01-01), proleptic Gregorian.
pub fn day_string(day: i64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{m:02}-{d:02}", if m <= 2 { y + 1 } else { y })
}

/// The day number of `YYYY-MM-DD`.
pub fn parse_day(s: &str) -> Option<i64> {
    let mut it = s.split('-');
    let (y, m, d): (i64, i64, i64) = (
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    );
    if it.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let day = era * 146_097 + doe - 719_468;
    (day_string(day) == s).then_some(day)
}

fn query(c: &Criteria, from: i64, to: i64) -> String {
    format!(
        "language:{} stars:>={} pushed:{}..{} archived:false fork:false",
        c.language,
        c.min_stars,
        day_string(from),
        day_string(to)
    )
}

fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// Every repository meeting `c`, most starred first within each window, windows newest first,
/// at most `c.max_repos`.
pub fn search(
    gh: &GitHub,
    c: &Criteria,
    cache: Option<&Store>,
    calls: &mut Calls,
    log: &mut SearchLog,
) -> Result<Vec<Found>, GhError> {
    let mut out: Vec<Found> = Vec::new();
    let mut stack = vec![(c.pushed_from, c.pushed_to)];
    while let Some((from, to)) = stack.pop() {
        if out.len() >= c.max_repos {
            break;
        }
        let q = encode(&query(c, from, to));
        let first = page(gh, &q, 1, cache, calls)?;
        let total = first
            .get("total_count")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        log.windows.push((day_string(from), day_string(to), total));
        if total > SEARCH_CAP && from < to {
            log.bisected += 1;
            let mid = from + (to - from) / 2;
            // Older half below the newer one on the stack: the newer is searched first.
            stack.push((from, mid));
            stack.push((mid + 1, to));
            continue;
        }
        if total > SEARCH_CAP {
            log.truncated.push(day_string(from));
        }
        let mut items = items_of(&first);
        let pages = total.min(SEARCH_CAP).div_ceil(100);
        for p in 2..=pages {
            if out.len() + items.len() >= c.max_repos {
                break;
            }
            items.extend(items_of(&page(gh, &q, p, cache, calls)?));
        }
        for f in items {
            if out.len() >= c.max_repos {
                break;
            }
            if !out.iter().any(|o| o.full_name == f.full_name) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

fn page(
    gh: &GitHub,
    q: &str,
    p: u64,
    cache: Option<&Store>,
    calls: &mut Calls,
) -> Result<Value, GhError> {
    let route = format!("/search/repositories?q={q}&sort=stars&order=desc&per_page=100&page={p}");
    Ok(gh.get(&route, cache, calls)?.unwrap_or(Value::Null))
}

fn items_of(v: &Value) -> Vec<Found> {
    v.get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter(|i| {
                    // The query says so; a result that disagrees is left out all the same.
                    i.get("archived").and_then(Value::as_bool) != Some(true)
                        && i.get("fork").and_then(Value::as_bool) != Some(true)
                })
                .filter_map(|i| {
                    Some(Found {
                        full_name: i.get("full_name")?.as_str()?.to_string(),
                        clone_url: i.get("clone_url")?.as_str()?.to_string(),
                        stars: i
                            .get("stargazers_count")
                            .and_then(Value::as_u64)
                            .unwrap_or(0),
                        default_branch: i
                            .get("default_branch")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip() {
        for (s, d) in [
            ("1970-01-01", 0),
            ("2015-01-01", 16_436),
            ("2024-02-29", 19_782),
        ] {
            assert_eq!(parse_day(s), Some(d), "{s}");
            assert_eq!(day_string(d), s);
        }
        assert_eq!(parse_day("2023-02-29"), None);
        assert_eq!(parse_day("2023-13-01"), None);
        assert_eq!(parse_day("x"), None);
    }

    #[test]
    fn the_query_says_every_criterion() {
        let c = Criteria {
            language: "Java".into(),
            min_stars: 100,
            pushed_from: 0,
            pushed_to: 0,
            max_repos: 1,
        };
        let q = query(
            &c,
            parse_day("2024-01-01").unwrap(),
            parse_day("2024-06-30").unwrap(),
        );
        assert_eq!(
            q,
            "language:Java stars:>=100 pushed:2024-01-01..2024-06-30 archived:false fork:false"
        );
        assert_eq!(encode("a b:>=1"), "a+b%3A%3E%3D1");
    }
}
