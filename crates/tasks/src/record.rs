//! One dataset record's fields, taken one by one with their types checked: what is left at the
//! end is what the format does not define.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub(crate) struct Fields {
    record: Map<String, Value>,
    pub(crate) warnings: Vec<String>,
}

impl Fields {
    pub(crate) fn new(record: Map<String, Value>) -> Fields {
        Fields {
            record,
            warnings: Vec::new(),
        }
    }

    /// A string that must be present and not blank.
    pub(crate) fn required_str(&mut self, name: &str) -> Result<String, String> {
        match self.record.remove(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Value::String(_)) => Err(format!("{name} is empty")),
            None | Some(Value::Null) => Err(format!("{name} is missing")),
            Some(other) => Err(format!("{name} is not a string ({other})")),
        }
    }

    /// A string that may be absent, null or empty (all three read as absent).
    pub(crate) fn optional_str(&mut self, name: &str) -> Result<Option<String>, String> {
        match self.record.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!("{name} is not a string ({})", clip(&other))),
        }
    }

    /// A version: a string, or a number as datasets sometimes store it (`4.3` → `"4.3"`).
    pub(crate) fn optional_version(&mut self, name: &str) -> Result<Option<String>, String> {
        match self.record.remove(name) {
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(v) => {
                self.record.insert(name.to_string(), v);
                self.optional_str(name)
            }
            None => Ok(None),
        }
    }

    /// A number that may be absent or null.
    pub(crate) fn optional_f64(&mut self, name: &str) -> Result<Option<f64>, String> {
        match self.record.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(format!("{name} is not a finite number")),
            },
            Some(other) => Err(format!("{name} is not a number ({})", clip(&other))),
        }
    }

    /// A list of strings: a JSON array, or a string holding one (SWE-bench's Hugging Face
    /// files store `FAIL_TO_PASS` so); absent or null is empty. Null items are dropped with a
    /// warning (SWE-fficiency's `FAIL_TO_PASS` is a list of nulls).
    pub(crate) fn list(&mut self, name: &str) -> Result<Vec<String>, String> {
        let items = match self.record.remove(name) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(Value::String(s)) if s.trim().is_empty() => return Ok(Vec::new()),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                Ok(Value::Array(items)) => items,
                _ => {
                    return Err(format!(
                        "{name} is a string that is not a JSON list ({})",
                        clip(&Value::String(s))
                    ));
                }
            },
            Some(other) => return Err(format!("{name} is not a list ({})", clip(&other))),
        };
        let mut out = Vec::with_capacity(items.len());
        let mut nulls = 0;
        for item in items {
            match item {
                Value::String(s) => out.push(s),
                Value::Null => nulls += 1,
                other => {
                    return Err(format!(
                        "{name} holds an item that is not a string ({})",
                        clip(&other)
                    ));
                }
            }
        }
        if nulls > 0 {
            self.warnings
                .push(format!("{name}: {nulls} null item(s) dropped"));
        }
        Ok(out)
    }

    /// A JSON value that may be absent or null, given as itself or as its JSON text (lists and
    /// objects in a Parquet file written by `etip export`).
    pub(crate) fn json(&mut self, name: &str) -> Result<Option<Value>, String> {
        match self.record.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                Ok(v @ (Value::Array(_) | Value::Object(_))) => Ok(Some(v)),
                _ => Err(format!(
                    "{name} is a string that is not JSON ({})",
                    clip(&Value::String(s))
                )),
            },
            Some(v) => Ok(Some(v)),
        }
    }

    /// The fields not taken.
    pub(crate) fn rest(self) -> BTreeMap<String, Value> {
        self.record.into_iter().collect()
    }
}

fn clip(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}
