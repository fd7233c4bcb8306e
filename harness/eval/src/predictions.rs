//! Predictions in SWE-bench's format: JSON lines with `instance_id`, `model_name_or_path` and
//! `model_patch` (a unified diff; `null`, missing or blank when the agent produced none, which is
//! the category `not_generated`). Other fields are ignored, as SWE-bench's harness does.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One prediction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Prediction {
    pub instance_id: String,
    pub model: String,
    /// The patch, `None` when the agent produced none.
    pub patch: Option<String>,
    /// The line of the file it was read from (1-based; 0 for `gold` and `empty`).
    pub line: usize,
    pub kind: Kind,
    /// A generated test's classes (Java) or node ids and paths to run; empty for a patch.
    pub classes: Vec<String>,
    /// A generated workload (`etip eval-test`): a Python script in the shape of an ETIP's
    /// workloads, timed on the original and the reference instead of a test patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
}

/// Where a prediction comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// A submission's patch: untrusted, checked before anything runs.
    Agent,
    /// The ETIP's own ground-truth patch (`--predictions gold`, the harness's self-check): it may
    /// change any file its commit changed.
    Gold,
    /// No change at all (`--predictions empty`): the original tree evaluated as a candidate, the
    /// harness's false-positive check (it should never be `correct_faster`).
    Empty,
    /// A generated test (`etip eval-test`): applied to the original and the reference.
    Test,
}

impl Prediction {
    /// The ground-truth patch of an instance as a prediction of model `gold`.
    pub fn gold(instance_id: &str, patch: String) -> Prediction {
        Prediction {
            instance_id: instance_id.to_string(),
            model: "gold".into(),
            patch: Some(patch),
            line: 0,
            kind: Kind::Gold,
            classes: Vec::new(),
            workload: None,
        }
    }

    /// The unchanged original as a prediction of model `empty`.
    pub fn empty(instance_id: &str) -> Prediction {
        Prediction {
            instance_id: instance_id.to_string(),
            model: "empty".into(),
            patch: Some(String::new()),
            line: 0,
            kind: Kind::Empty,
            classes: Vec::new(),
            workload: None,
        }
    }
}

#[derive(Deserialize)]
struct Raw {
    instance_id: Option<String>,
    model_name_or_path: Option<String>,
    model_patch: Option<String>,
    test_patch: Option<String>,
    test_classes: Option<Classes>,
    workload: Option<String>,
}

/// `test_classes`: a list, or one comma-separated string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Classes {
    List(Vec<String>),
    Text(String),
}

/// Why a predictions file cannot be used (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PredictionsError {
    #[error("line {line}: not a JSON object of SWE-bench's prediction format ({detail})")]
    Parse { line: usize, detail: String },
    #[error(
        "line {line}: not a JSON object but {found}; predictions are JSON lines, one object per line{hint}"
    )]
    NotObject {
        line: usize,
        found: &'static str,
        hint: &'static str,
    },
    #[error("line {line}: {field} is missing or empty")]
    Missing { line: usize, field: &'static str },
    #[error(
        "line {line}: instance {instance} of model {model} was already predicted on line {first}"
    )]
    Duplicate {
        line: usize,
        first: usize,
        instance: String,
        model: String,
    },
    #[error("the predictions hold no line")]
    Empty,
}

/// Reads the predictions of a JSON Lines text; one instance is predicted at most once per model.
pub fn parse(text: &str) -> Result<Vec<Prediction>, PredictionsError> {
    parse_as(text, Kind::Agent)
}

/// Reads generated tests (`etip eval-test`): JSON lines with `instance_id`, `model_name_or_path`
/// (the generator), `test_patch` (a unified diff adding or changing test files; blank or missing
/// when none was generated) and `test_classes` (the classes, node ids or paths to run: a list or
/// one comma-separated string); or, instead of a test, `workload` (a Python workload script in
/// the shape of an ETIP's workloads). One test or workload per instance and generator.
pub fn parse_tests(text: &str) -> Result<Vec<Prediction>, PredictionsError> {
    parse_as(text, Kind::Test)
}

fn parse_as(text: &str, kind: Kind) -> Result<Vec<Prediction>, PredictionsError> {
    let clip = |s: &str| etip_core::clip::clip(s, 120).into_owned();
    let mut out = Vec::new();
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        // Only an object: serde would also take a JSON array as the fields in order.
        if let Some(e) = not_object(raw, line) {
            return Err(e);
        }
        let r: Raw = serde_json::from_str(raw).map_err(|e| PredictionsError::Parse {
            line,
            detail: clip(&e.to_string()),
        })?;
        let nonblank = |v: Option<String>, field| {
            v.filter(|s| !s.trim().is_empty())
                .ok_or(PredictionsError::Missing { line, field })
        };
        let instance_id = nonblank(r.instance_id, "instance_id")?;
        let model = nonblank(r.model_name_or_path, "model_name_or_path")?;
        let key = (instance_id.clone(), model.clone());
        if let Some(first) = seen.get(&key) {
            return Err(PredictionsError::Duplicate {
                line,
                first: *first,
                instance: clip(&instance_id),
                model: clip(&model),
            });
        }
        seen.insert(key, line);
        let (patch, classes) = match kind {
            Kind::Test => (
                r.test_patch,
                match r.test_classes {
                    Some(Classes::List(v)) => v,
                    Some(Classes::Text(t)) => t.split(',').map(str::to_string).collect(),
                    None => Vec::new(),
                }
                .into_iter()
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect(),
            ),
            _ => (r.model_patch, Vec::new()),
        };
        let patch = patch.filter(|p| !p.trim().is_empty());
        let workload = match kind {
            Kind::Test => r.workload.filter(|w| !w.trim().is_empty()),
            _ => None,
        };
        if patch.is_some() && workload.is_some() {
            return Err(PredictionsError::Parse {
                line,
                detail: "give `test_patch` or `workload`, not both".into(),
            });
        }
        out.push(Prediction {
            instance_id,
            model,
            patch,
            line,
            kind,
            classes,
            workload,
        });
    }
    if out.is_empty() {
        return Err(PredictionsError::Empty);
    }
    Ok(out)
}

/// The error for a line that is JSON but no object (or opens an array spread over lines); `None`
/// for a line that opens an object.
fn not_object(raw: &str, line: usize) -> Option<PredictionsError> {
    const ARRAY_HINT: &str =
        " (a file holding one JSON array of predictions becomes JSON lines with `jq -c '.[]'`)";
    if raw.trim_start().starts_with('{') {
        return None;
    }
    let (found, hint) = match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(_)) => return None,
        Ok(serde_json::Value::Array(_)) => ("a JSON array", ARRAY_HINT),
        Ok(serde_json::Value::String(_)) => ("a JSON string", ""),
        Ok(serde_json::Value::Number(_)) => ("a JSON number", ""),
        Ok(serde_json::Value::Bool(_)) => ("a JSON boolean", ""),
        Ok(serde_json::Value::Null) => ("JSON null", ""),
        Err(_) if raw.trim_start().starts_with('[') => ("the start of a JSON array", ARRAY_HINT),
        Err(_) => return None,
    };
    Some(PredictionsError::NotObject { line, found, hint })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swe_bench_lines_are_read_and_a_missing_patch_is_not_generated() {
        let text = r#"{"instance_id":"a","model_name_or_path":"m1","model_patch":"diff --git a/x b/x\n","extra":1}

{"instance_id":"a","model_name_or_path":"m2","model_patch":null}
{"instance_id":"b","model_name_or_path":"m1","model_patch":"   "}
{"instance_id":"c","model_name_or_path":"m1"}
"#;
        let p = parse(text).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].patch.as_deref(), Some("diff --git a/x b/x\n"));
        assert_eq!((p[1].model.as_str(), p[1].line), ("m2", 3));
        assert!(p[1].patch.is_none() && p[2].patch.is_none() && p[3].patch.is_none());
    }

    #[test]
    fn generated_tests_name_their_classes_as_a_list_or_a_string() {
        let text = r#"{"instance_id":"a","model_name_or_path":"g","test_patch":"--- a/x\n","test_classes":["demo.A", " demo.B "]}
{"instance_id":"b","model_name_or_path":"g","test_patch":"--- a/y\n","test_classes":"tests/test_x.py, tests/test_y.py"}
{"instance_id":"c","model_name_or_path":"g"}
"#;
        let t = parse_tests(text).unwrap();
        assert_eq!(t[0].classes, ["demo.A", "demo.B"]);
        assert_eq!(t[1].classes, ["tests/test_x.py", "tests/test_y.py"]);
        assert!(t[2].patch.is_none() && t[2].classes.is_empty());
        assert!(t.iter().all(|p| p.kind == Kind::Test));
        let w = parse_tests(
            r#"{"instance_id":"a","model_name_or_path":"g","workload":"def workload():\n    pass\n"}"#,
        )
        .unwrap();
        assert_eq!(
            w[0].workload.as_deref(),
            Some("def workload():\n    pass\n")
        );
        assert!(w[0].patch.is_none());
        let both = r#"{"instance_id":"a","model_name_or_path":"g","test_patch":"--- a/x\n","workload":"x = 1"}"#;
        assert!(
            parse_tests(both)
                .unwrap_err()
                .to_string()
                .contains("not both")
        );
        // An agent's prediction file carries no workload.
        let p = parse(
            r#"{"instance_id":"a","model_name_or_path":"m","model_patch":"x","workload":"y"}"#,
        )
        .unwrap();
        assert!(p[0].workload.is_none());
    }

    #[test]
    fn bad_lines_name_their_line() {
        let dup = "{\"instance_id\":\"a\",\"model_name_or_path\":\"m\",\"model_patch\":\"x\"}\n"
            .repeat(2);
        assert_eq!(
            parse(&dup),
            Err(PredictionsError::Duplicate {
                line: 2,
                first: 1,
                instance: "a".into(),
                model: "m".into()
            })
        );
        let e = parse("{\"instance_id\":\"\",\"model_name_or_path\":\"m\"}\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: instance_id is missing or empty");
        let e = parse("[1]\n").unwrap_err().to_string();
        assert!(e.starts_with("line 1: not a JSON object"), "{e}");
        // A JSON array of predictions, on one line or spread over several: said, with the way out.
        let one = r#"[{"instance_id":"a","model_name_or_path":"m","model_patch":"x"}]"#;
        let fields = r#"["a","m","x",null,null]"#;
        for text in [
            one.to_string(),
            "[\n".to_string() + &one[1..],
            "[]".into(),
            fields.into(),
        ] {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains("JSON array") && e.contains("jq -c"), "{e}");
            assert!(!e.contains("struct Raw"), "{e}");
        }
        assert_eq!(parse("\n\n"), Err(PredictionsError::Empty));
        let long = format!(
            "{{\"instance_id\":\"{}\",\"model_name_or_path\":\"m\"}}\n",
            "x".repeat(5000)
        );
        let e = parse(&long.repeat(2)).unwrap_err().to_string();
        assert!(e.len() < 400, "{} bytes", e.len());
    }
}
