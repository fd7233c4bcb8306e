//! A unit's result as it crosses a cluster: written by the node's runner as lines of its standard
//! output, read back by the coordinator from the task's log, and checked before it is believed.
//!
//! The reply is one JSON document ([`Reply`]: the unit's id and key, the node, the outcome) cut
//! into lines of at most [`CHUNK`] bytes (engines split longer log lines), each prefixed with
//! [`PREFIX`] and its place (`3/7`), and closed by a line with the SHA-256 of the whole text:
//!
//! ```text
//! etip-reply 1/2 {"schema":1,"unit":"eval:[\"run\",\"m\",\"x\"]","key":"k…
//! etip-reply 2/2 …"outcome":{"output":{"record":{…}}}}
//! etip-reply end 2 5f1c…
//! ```
//!
//! Anything else the runner prints is ignored. [`read`] refuses a reply with a missing or
//! repeated chunk, a digest that does not match, text that is no reply or another schema; a reply
//! for another unit or key ([`Reply::check`]) is foreign. Each of these is an infrastructure
//! failure of the attempt, never a result.
//!
//! ```
//! use etip_core::node::Node;
//! use etip_core::unit::{Stage, UnitOutput, WorkUnit};
//! use etip_core::unit::wire::{Reply, read};
//! let unit = WorkUnit::new(Stage::Measure, "x", serde_json::json!({}), serde_json::json!({}), "k");
//! let output = UnitOutput::of(&serde_json::json!({"speedup": 2.0})).unwrap();
//! let reply = Reply::new(&unit, Node::default(), Ok(output.clone()));
//! let log = format!("starting\n{}\n", reply.lines().join("\n"));
//! let back = read(&log).unwrap();
//! back.check(&unit).unwrap();
//! assert_eq!(back.into_result().unwrap(), output);
//! ```

use super::{UnitError, UnitOutput, WorkUnit};
use crate::node::Node;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The version of the reply's JSON.
pub const SCHEMA: u32 = 1;
/// What starts every line of a reply.
pub const PREFIX: &str = "etip-reply ";
/// Bytes of the reply's text per line (engines split log lines at 16 KiB).
pub const CHUNK: usize = 8 * 1024;

/// How a unit ended on its node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The stage's record.
    Output(UnitOutput),
    /// No output: the node's harness failed ([`UnitError::Infrastructure`]).
    Infrastructure {
        detail: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        record: Option<UnitOutput>,
    },
    /// The runner was stopped before the unit ended.
    Cancelled,
}

/// A unit's result with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub schema: u32,
    /// [`WorkUnit::id`] of the unit that ran.
    pub unit: String,
    /// [`WorkUnit::key`] of the unit that ran.
    pub key: String,
    /// The node that ran it.
    pub node: Node,
    /// The images the unit ran, by reference, with the digest the node's engine had for each.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, String>,
    /// Seconds the runner took, from reading the unit to its reply (the rest of a unit's time on
    /// a cluster is the engine's and the coordinator's).
    #[serde(default)]
    pub secs: f64,
    pub outcome: Outcome,
}

/// Why a log holds no believable reply.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("the task's log holds no reply")]
    Missing,
    #[error("the reply is incomplete: {0}")]
    Incomplete(String),
    #[error("the reply's digest does not match its text")]
    Digest,
    #[error("the reply is not etip's: {0}")]
    Malformed(String),
    #[error("the reply has schema {0}, this etip reads {SCHEMA}")]
    Schema(u32),
    #[error("the reply is for {got}, not for {want}")]
    Foreign { got: String, want: String },
}

impl Reply {
    /// The reply of `unit`'s run on `node`.
    pub fn new(unit: &WorkUnit, node: Node, result: Result<UnitOutput, UnitError>) -> Reply {
        let outcome = match result {
            Ok(output) => Outcome::Output(output),
            Err(UnitError::Cancelled) => Outcome::Cancelled,
            Err(UnitError::Infrastructure { detail, record }) => {
                Outcome::Infrastructure { detail, record }
            }
            Err(e @ UnitError::Record(_)) => Outcome::Infrastructure {
                detail: e.to_string(),
                record: None,
            },
        };
        Reply {
            schema: SCHEMA,
            unit: unit.id(),
            key: unit.key.clone(),
            node,
            images: BTreeMap::new(),
            secs: 0.0,
            outcome,
        }
    }

    /// The lines that carry the reply (see the module docs), without line ends.
    pub fn lines(&self) -> Vec<String> {
        // A reply is plain data: serializing it cannot fail.
        let text = serde_json::to_string(self).unwrap_or_default();
        let chunks = split(&text, CHUNK);
        let n = chunks.len();
        let mut lines: Vec<String> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{PREFIX}{}/{n} {c}", i + 1))
            .collect();
        lines.push(format!("{PREFIX}end {n} {}", digest(&text)));
        lines
    }

    /// Refuses a reply for another unit, or for the same unit under another key.
    pub fn check(&self, unit: &WorkUnit) -> Result<(), WireError> {
        if self.unit != unit.id() || self.key != unit.key {
            return Err(WireError::Foreign {
                got: format!("{} (key {})", self.unit, short(&self.key)),
                want: format!("{} (key {})", unit.id(), short(&unit.key)),
            });
        }
        Ok(())
    }

    /// The unit's result as its runner returned it.
    pub fn into_result(self) -> Result<UnitOutput, UnitError> {
        match self.outcome {
            Outcome::Output(o) => Ok(o),
            Outcome::Cancelled => Err(UnitError::Cancelled),
            Outcome::Infrastructure { detail, record } => {
                Err(UnitError::Infrastructure { detail, record })
            }
        }
    }
}

fn short(key: &str) -> &str {
    key.get(..12).unwrap_or(key)
}

fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// `text` cut into pieces of at most `size` bytes, at character boundaries.
fn split(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (head, tail) = rest.split_at(end);
        out.push(head);
        rest = tail;
    }
    if out.is_empty() {
        out.push("");
    }
    out
}

/// The last complete reply in `log` (a task's standard output), checked against its digest.
pub fn read(log: &str) -> Result<Reply, WireError> {
    let mut chunks: BTreeMap<usize, &str> = BTreeMap::new();
    let mut last: Option<Result<Reply, WireError>> = None;
    let mut seen = false;
    for line in log.lines() {
        let line = line.trim_end_matches('\r');
        let Some(rest) = line.strip_prefix(PREFIX) else {
            continue;
        };
        seen = true;
        if let Some(end) = rest.strip_prefix("end ") {
            last = Some(assemble(&chunks, end));
            chunks.clear();
            continue;
        }
        let (place, chunk) = rest.split_once(' ').unwrap_or((rest, ""));
        let Some(i) = place
            .split_once('/')
            .and_then(|(i, _)| i.parse::<usize>().ok())
        else {
            last = Some(Err(WireError::Malformed(format!(
                "a line without its place: {place}"
            ))));
            continue;
        };
        if chunks.insert(i, chunk).is_some() {
            last = Some(Err(WireError::Incomplete(format!("chunk {i} came twice"))));
        }
    }
    match last {
        Some(r) => r,
        None if seen => Err(WireError::Incomplete("no closing line".into())),
        None => Err(WireError::Missing),
    }
}

fn assemble(chunks: &BTreeMap<usize, &str>, end: &str) -> Result<Reply, WireError> {
    let (n, sum) = end
        .split_once(' ')
        .ok_or_else(|| WireError::Malformed(format!("closing line `{end}`")))?;
    let n: usize = n
        .parse()
        .map_err(|_| WireError::Malformed(format!("closing line `{end}`")))?;
    if chunks.len() != n || (1..=n).any(|i| !chunks.contains_key(&i)) {
        return Err(WireError::Incomplete(format!(
            "{} of {n} chunks",
            (1..=n).filter(|i| chunks.contains_key(i)).count()
        )));
    }
    let text: String = chunks.values().copied().collect();
    if digest(&text) != sum.trim() {
        return Err(WireError::Digest);
    }
    let reply: Reply =
        serde_json::from_str(&text).map_err(|e| WireError::Malformed(e.to_string()))?;
    if reply.schema != SCHEMA {
        return Err(WireError::Schema(reply.schema));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::Stage;

    fn unit(key: &str) -> WorkUnit {
        WorkUnit::new(
            Stage::Eval,
            "[\"run\",\"m\",\"x\"]",
            serde_json::json!({}),
            serde_json::json!({}),
            key,
        )
    }

    fn big_output() -> UnitOutput {
        // Over three chunks, with multi-byte characters at the cuts.
        let text: String = "é→x".repeat(CHUNK);
        UnitOutput::of(&serde_json::json!({ "log": text })).unwrap()
    }

    #[test]
    fn a_long_reply_crosses_in_chunks_among_other_output() {
        let u = unit("k");
        let node = Node {
            id: "n1".into(),
            hostname: "w1".into(),
            ..Node::default()
        };
        let reply = Reply::new(&u, node.clone(), Ok(big_output()));
        let lines = reply.lines();
        assert!(lines.len() > 3);
        assert!(lines.iter().all(|l| l.len() <= CHUNK + 32));
        let mut log = String::from("pulling image\n");
        for (i, l) in lines.iter().enumerate() {
            log.push_str(l);
            log.push('\n');
            if i == 1 {
                log.push_str("a warning in between\n");
            }
        }
        let back = read(&log).unwrap();
        back.check(&u).unwrap();
        assert_eq!(back.node, node);
        assert_eq!(back.into_result().unwrap(), big_output());
    }

    #[test]
    fn failures_cross_as_failures() {
        let u = unit("k");
        let record = UnitOutput::of(&serde_json::json!({"category": "error"})).unwrap();
        let err = UnitError::infrastructure_with("the engine went away", record.clone());
        let reply = Reply::new(&u, Node::default(), Err(err));
        let back = read(&reply.lines().join("\n")).unwrap();
        match back.into_result() {
            Err(UnitError::Infrastructure { detail, record: r }) => {
                assert_eq!(detail, "the engine went away");
                assert_eq!(r, Some(record));
            }
            other => panic!("{other:?}"),
        }
        let cancelled = Reply::new(&u, Node::default(), Err(UnitError::Cancelled));
        let back = read(&cancelled.lines().join("\n")).unwrap();
        assert!(matches!(back.into_result(), Err(UnitError::Cancelled)));
    }

    #[test]
    fn a_damaged_or_foreign_reply_is_refused() {
        let u = unit("k");
        let lines = Reply::new(&u, Node::default(), Ok(big_output())).lines();
        assert_eq!(read("no reply here\n"), Err(WireError::Missing));
        // A chunk lost.
        let mut lost = lines.clone();
        lost.remove(1);
        assert!(matches!(
            read(&lost.join("\n")),
            Err(WireError::Incomplete(_))
        ));
        // Cut off before the closing line (the node died while printing).
        let cut = lines[..lines.len() - 1].join("\n");
        assert!(matches!(read(&cut), Err(WireError::Incomplete(_))));
        // A byte changed.
        let mut changed = lines.clone();
        changed[0] = changed[0].replacen("\"k\"", "\"q\"", 1);
        assert_eq!(read(&changed.join("\n")), Err(WireError::Digest));
        // Not JSON of a reply, with a matching digest.
        let text = "{\"hello\":1}";
        let forged = format!("{PREFIX}1/1 {text}\n{PREFIX}end 1 {}", digest(text));
        assert!(matches!(read(&forged), Err(WireError::Malformed(_))));
        // Another unit's reply, or this unit's under another key.
        let other = read(
            &Reply::new(&unit("k2"), Node::default(), Ok(big_output()))
                .lines()
                .join("\n"),
        )
        .unwrap();
        assert!(matches!(other.check(&u), Err(WireError::Foreign { .. })));
        // Another schema.
        let mut future = Reply::new(&u, Node::default(), Ok(big_output()));
        future.schema = 2;
        assert_eq!(read(&future.lines().join("\n")), Err(WireError::Schema(2)));
    }

    #[test]
    fn the_last_complete_reply_counts() {
        let u = unit("k");
        let first = Reply::new(&u, Node::default(), Err(UnitError::Cancelled)).lines();
        let second = Reply::new(&u, Node::default(), Ok(big_output())).lines();
        let log = format!("{}\n{}", first.join("\n"), second.join("\n"));
        assert!(read(&log).unwrap().into_result().is_ok());
    }
}
