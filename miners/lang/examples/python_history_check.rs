//! Checks [`judge_python`] against whole-file tree-sitter comparisons on every modified `.py` file
//! of a repository's first-parent history, and times both:
//!
//! `cargo run --release -p etip-lang --example python_history_check -- REPO [--since YYYY-MM-DD]
//! [--limit N] [--show N] [--show-refused N] [--dump DIR]`
//!
//! REPO may be bare. Renamed files count when their content changed too (files whose blobs the
//! mirror lacks are skipped and counted). Rows come from a Myers line diff
//! ([`etip_lang::labels::changed_rows`]). Whole-file summaries of a blob are reused when an older
//! commit needs the same blob again (up to 400 kept), so the whole-file time is that of the parses
//! actually done; its throughput is over the bytes parsed. `--show N` prints the first N
//! disagreements, `--show-refused N` the line where the token scan gave up on the first N refused
//! files; `--dump DIR` writes each disagreement's versions as `N.old` / `N.new` with `N.txt` holding
//! the commit, the paths, the rows and both answers. Every rejection that the judgement without
//! the rows gives (what the miner decides before computing a line diff) is checked against the
//! judgement with them; differences are printed as `ROWLESS`.
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use etip_core::candidate::Language;
use etip_lang::python_units::Module;
use etip_lang::python_window::{PythonPair, judge_python};
use etip_lang::semantic::{Analyzer, FileChange, FileSummary, Side, compare};
use etip_lang::window::{Modified, WindowStats, Windowed};

struct Args {
    repo: String,
    since: Option<i64>,
    limit: usize,
    show: usize,
    show_refused: usize,
    dump: Option<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        repo: String::new(),
        since: None,
        limit: usize::MAX,
        show: 10,
        show_refused: 0,
        dump: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().expect("a value after the flag");
        match a.as_str() {
            "--since" => args.since = Some(days_from_date(&value()) * 86_400),
            "--limit" => args.limit = value().parse().expect("--limit N"),
            "--show" => args.show = value().parse().expect("--show N"),
            "--dump" => args.dump = Some(value()),
            "--show-refused" => args.show_refused = value().parse().expect("--show-refused N"),
            _ => args.repo = a,
        }
    }
    assert!(
        !args.repo.is_empty(),
        "usage: python_history_check REPO [--since YYYY-MM-DD] [--limit N] [--show N] [--dump DIR]"
    );
    args
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date.
fn days_from_date(date: &str) -> i64 {
    let parts: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().expect("YYYY-MM-DD"))
        .collect();
    let (y, m, d) = (parts[0], parts[1], parts[2]);
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[derive(Default)]
struct Tally {
    files: u64,
    bytes: u64,
    agree: u64,
    disagree: u64,
    refused: u64,
    semantic: u64,
    t_whole: Duration,
    whole_bytes: u64,
    t_tokens: Duration,
    stats: WindowStats,
    /// Files whose blobs the mirror lacks.
    missing: u64,
    /// Rejections decided without the changed rows ([`PythonPair::judge`] with `rows` false), and
    /// those of them that differ from the judgement with the rows.
    rowless: u64,
    rowless_disagree: u64,
}

fn main() {
    let args = parse_args();
    let repo = git2::Repository::open(&args.repo).expect("open the repository");
    let mut walk = repo.revwalk().expect("revwalk");
    walk.push_head().expect("HEAD");
    walk.simplify_first_parent().expect("first parent");
    let mut checker = Checker {
        repo: &repo,
        an: Analyzer::new(Language::Python).expect("python grammar"),
        cache: HashMap::new(),
        order: VecDeque::new(),
        tally: Tally::default(),
    };
    let mut commits = 0usize;
    for oid in walk {
        let commit = repo.find_commit(oid.expect("oid")).expect("commit");
        if args.since.is_some_and(|s| commit.time().seconds() < s) || commit.parent_count() == 0 {
            continue;
        }
        commits += 1;
        if commits > args.limit {
            break;
        }
        checker.commit(&commit, &args);
    }
    checker.tally.report(commits);
}

/// Both implementations on every modified Python file, with a cache of whole-file summaries.
struct Checker<'r> {
    repo: &'r git2::Repository,
    an: Analyzer,
    /// Summaries of old blobs, which an older commit may need again as its new blobs.
    cache: HashMap<git2::Oid, FileSummary>,
    order: VecDeque<git2::Oid>,
    tally: Tally,
}

impl Checker<'_> {
    fn commit(&mut self, commit: &git2::Commit, args: &Args) {
        let parent = commit.parent(0).expect("parent");
        let (pt, ct) = (parent.tree().expect("tree"), commit.tree().expect("tree"));
        let mut diff = self
            .repo
            .diff_tree_to_tree(Some(&pt), Some(&ct), None)
            .expect("diff");
        // A mirror may lack its largest blobs: without them, no rename detection for the commit.
        let _ = diff.find_similar(Some(git2::DiffFindOptions::new().renames(true)));
        for delta in diff.deltas() {
            if !matches!(delta.status(), git2::Delta::Modified | git2::Delta::Renamed) {
                continue;
            }
            let (of, nf) = (delta.old_file(), delta.new_file());
            let (Some(op), Some(np)) = (of.path(), nf.path()) else {
                continue;
            };
            let (op, np) = (op.to_string_lossy(), np.to_string_lossy());
            if !op.ends_with(".py") || !np.ends_with(".py") {
                continue;
            }
            let (Ok(old), Ok(new)) = (self.repo.find_blob(of.id()), self.repo.find_blob(nf.id()))
            else {
                self.tally.missing += 1;
                continue;
            };
            let (old, new) = (old.content(), new.content());
            let (del, add) = etip_lang::labels::changed_rows(old, new);
            let pair = Pair {
                old,
                new,
                op: &op,
                np: &np,
                del: &del,
                add: &add,
            };
            let (so, sn) = (self.summary(of.id(), old), self.summary(nf.id(), new));
            let t = Instant::now();
            let expected = pair.whole(&so, &sn);
            self.tally.t_whole += t.elapsed();
            self.keep(of.id(), so);
            let got = pair.tokens(&mut self.tally);
            self.tally.record(commit, &pair, &expected, &got, args);
        }
    }

    /// The whole-file summary of a blob (timed when it is parsed).
    fn summary(&mut self, id: git2::Oid, src: &[u8]) -> FileSummary {
        let t = Instant::now();
        let s = self.cache.remove(&id).unwrap_or_else(|| {
            self.tally.whole_bytes += src.len() as u64;
            self.an.summarize(src).expect("parse")
        });
        self.tally.t_whole += t.elapsed();
        s
    }

    /// Keeps an old blob's summary for the next 400 files.
    fn keep(&mut self, id: git2::Oid, summary: FileSummary) {
        if self.cache.insert(id, summary).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > 400 {
            if let Some(id) = self.order.pop_front() {
                self.cache.remove(&id);
            }
        }
    }
}

struct Pair<'a> {
    old: &'a [u8],
    new: &'a [u8],
    op: &'a str,
    np: &'a str,
    del: &'a [usize],
    add: &'a [usize],
}

impl Pair<'_> {
    fn whole(&self, so: &FileSummary, sn: &FileSummary) -> FileChange {
        compare(
            Language::Python,
            Some(Side {
                summary: so,
                path: self.op,
                rows: self.del,
            }),
            Some(Side {
                summary: sn,
                path: self.np,
                rows: self.add,
            }),
        )
    }

    fn tokens(&self, tally: &mut Tally) -> Windowed {
        let m = Modified {
            old: self.old,
            new: self.new,
            old_path: self.op,
            new_path: self.np,
            deleted: self.del,
            added: self.add,
        };
        let t = Instant::now();
        let got = judge_python(&m, &mut tally.stats);
        tally.t_tokens += t.elapsed();
        // Rows that are not there: an answer is one given without them.
        let rowless = PythonPair::parse(self.old, self.new, &mut WindowStats::default())
            .and_then(|pair| pair.judge(&m, || Err(()), &mut WindowStats::default()).ok());
        if let Some(rowless) = rowless {
            tally.rowless += 1;
            if got != Windowed::Decided(rowless.clone()) {
                tally.rowless_disagree += 1;
                println!(
                    "ROWLESS {} -> {}: without rows {rowless:?}, with rows {got:?}",
                    self.op, self.np
                );
            }
        }
        got
    }
}

impl Tally {
    fn record(
        &mut self,
        commit: &git2::Commit,
        pair: &Pair,
        expected: &FileChange,
        got: &Windowed,
        args: &Args,
    ) {
        self.files += 1;
        self.bytes += (pair.old.len() + pair.new.len()) as u64;
        self.semantic += u64::from(matches!(expected, FileChange::Semantic(_)));
        match got {
            Windowed::NeedsFullParse => {
                self.refused += 1;
                if self.refused as usize <= args.show_refused {
                    for (path, src) in [(pair.op, pair.old), (pair.np, pair.new)] {
                        if let Err(at) = Module::parse_or_offset(src) {
                            let line_start = src[..at]
                                .iter()
                                .rposition(|b| *b == b'\n')
                                .map_or(0, |i| i + 1);
                            let line_end = src[at..]
                                .iter()
                                .position(|b| *b == b'\n')
                                .map_or(src.len(), |i| at + i);
                            let row = src[..at].iter().filter(|b| **b == b'\n').count();
                            println!(
                                "REFUSED {} {path}:{}: {}",
                                commit.id(),
                                row + 1,
                                String::from_utf8_lossy(&src[line_start..line_end])
                            );
                            break;
                        }
                    }
                }
            }
            Windowed::Decided(x) if x == expected => self.agree += 1,
            Windowed::Decided(x) => {
                self.disagree += 1;
                if self.disagree as usize <= args.show {
                    println!(
                        "DISAGREE {} {} -> {}\n  whole-file {expected:?}\n  tokens     {x:?}",
                        commit.id(),
                        pair.op,
                        pair.np
                    );
                }
                if let Some(dir) = &args.dump {
                    let n = self.disagree;
                    std::fs::create_dir_all(dir).expect("dump dir");
                    std::fs::write(format!("{dir}/{n}.old"), pair.old).expect("dump");
                    std::fs::write(format!("{dir}/{n}.new"), pair.new).expect("dump");
                    let info = format!(
                        "{} {} {}\ndel {:?}\nadd {:?}\nwhole {expected:?}\ntokens {x:?}\n",
                        commit.id(),
                        pair.op,
                        pair.np,
                        pair.del,
                        pair.add
                    );
                    std::fs::write(format!("{dir}/{n}.txt"), info).expect("dump");
                }
            }
        }
    }

    fn report(&self, commits: usize) {
        let mb = |b: u64| b as f64 / 1e6;
        let rate = |b: u64, t: Duration| mb(b) / t.as_secs_f64().max(1e-9);
        println!(
            "{commits} commits, {} modified .py files ({:.1} MB), {} semantic by whole-file parses",
            self.files,
            mb(self.bytes),
            self.semantic
        );
        println!(
            "tokens: agree {}, disagree {}, refused {} ({:.2}%)",
            self.agree,
            self.disagree,
            self.refused,
            100.0 * self.refused as f64 / self.files.max(1) as f64
        );
        println!(
            "whole-file: {:.2} s for {:.1} MB parsed ({:.1} MB/s); tokens: {:.2} s for {:.1} MB ({:.1} MB/s)",
            self.t_whole.as_secs_f64(),
            mb(self.whole_bytes),
            rate(self.whole_bytes, self.t_whole),
            self.t_tokens.as_secs_f64(),
            mb(self.bytes),
            rate(self.bytes, self.t_tokens)
        );
        println!(
            "rejections decided without the rows: {}, of which differ from the rows' answer: {}",
            self.rowless, self.rowless_disagree
        );
        println!(
            "{:?}; {} files skipped (blobs missing)",
            self.stats, self.missing
        );
    }
}
