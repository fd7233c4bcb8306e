//! Records written as a Parquet file (`etip export`), in the shape the field's datasets have on
//! Hugging Face: one optional column per field, strings as UTF-8, numbers and booleans as
//! themselves, and every list or object as its JSON text (SWE-bench's own Parquet files keep
//! `FAIL_TO_PASS` and `PASS_TO_PASS` that way; [`crate::read_records`] reads either shape back).
//! One row group, Snappy-compressed.

use parquet::basic::{Compression, ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Why records could not be written as Parquet.
#[derive(Debug, thiserror::Error)]
#[error("writing Parquet: {0}")]
pub struct WriteError(String);

impl From<parquet::errors::ParquetError> for WriteError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        WriteError(e.to_string())
    }
}

/// How a column's values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Float,
    Bool,
    /// Lists, objects, or values of mixed kinds: their JSON text.
    Json,
}

fn kind_of(values: impl Iterator<Item = Option<Value>>) -> Kind {
    let mut kind: Option<Kind> = None;
    for v in values.flatten() {
        let k = match &v {
            Value::Null => continue,
            Value::String(_) => Kind::Text,
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() => Kind::Int,
            Value::Number(_) => Kind::Float,
            Value::Array(_) | Value::Object(_) => Kind::Json,
        };
        kind = Some(match (kind, k) {
            (None, k) => k,
            (Some(a), b) if a == b => a,
            (Some(Kind::Int), Kind::Float) | (Some(Kind::Float), Kind::Int) => Kind::Float,
            _ => Kind::Json,
        });
    }
    // A column of nulls only is text: the type a reader least needs to guess at.
    kind.unwrap_or(Kind::Text)
}

/// The Parquet file of `rows`, with `columns` in that order (a field of a row that `columns`
/// does not name is an error: nothing is dropped silently; a missing field is null).
pub fn to_parquet(columns: &[&str], rows: &[Map<String, Value>]) -> Result<Vec<u8>, WriteError> {
    for (i, row) in rows.iter().enumerate() {
        if let Some(k) = row.keys().find(|k| !columns.contains(&k.as_str())) {
            return Err(WriteError(format!(
                "row {} has field {k:?}, not a column",
                i + 1
            )));
        }
    }
    let kinds: Vec<Kind> = columns
        .iter()
        .map(|c| kind_of(rows.iter().map(|r| r.get(*c).cloned())))
        .collect();
    let mut fields = Vec::new();
    for (name, kind) in columns.iter().zip(&kinds) {
        let builder = match kind {
            Kind::Text | Kind::Json => Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
                .with_logical_type(Some(LogicalType::String))
                .with_converted_type(ConvertedType::UTF8),
            Kind::Int => Type::primitive_type_builder(name, Physical::INT64),
            Kind::Float => Type::primitive_type_builder(name, Physical::DOUBLE),
            Kind::Bool => Type::primitive_type_builder(name, Physical::BOOLEAN),
        };
        fields.push(Arc::new(
            builder.with_repetition(Repetition::OPTIONAL).build()?,
        ));
    }
    let schema = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("etip {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, Arc::new(schema), Arc::new(props))?;
    let mut group = writer.next_row_group()?;
    for (name, kind) in columns.iter().zip(&kinds) {
        let Some(mut col) = group.next_column()? else {
            return Err(WriteError(format!("no column writer for {name}")));
        };
        let cells: Vec<Option<&Value>> = rows
            .iter()
            .map(|r| r.get(*name).filter(|v| !v.is_null()))
            .collect();
        let levels: Vec<i16> = cells.iter().map(|c| i16::from(c.is_some())).collect();
        let present = cells.iter().flatten();
        match kind {
            Kind::Text | Kind::Json => {
                let values: Vec<ByteArray> = present
                    .map(|v| match v {
                        Value::String(s) if *kind == Kind::Text => ByteArray::from(s.as_str()),
                        other => ByteArray::from(other.to_string().as_str()),
                    })
                    .collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&values, Some(&levels), None)?;
            }
            Kind::Int => {
                let values: Vec<i64> = present.filter_map(|v| v.as_i64()).collect();
                col.typed::<Int64Type>()
                    .write_batch(&values, Some(&levels), None)?;
            }
            Kind::Float => {
                let values: Vec<f64> = present.filter_map(|v| v.as_f64()).collect();
                col.typed::<DoubleType>()
                    .write_batch(&values, Some(&levels), None)?;
            }
            Kind::Bool => {
                let values: Vec<bool> = present.filter_map(|v| v.as_bool()).collect();
                col.typed::<BoolType>()
                    .write_batch(&values, Some(&levels), None)?;
            }
        }
        col.close()?;
    }
    group.close()?;
    writer.close()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// Written and read back by the crate's reader: strings, numbers (integers widened where a
    /// column mixes them with floats), booleans, nulls, and lists as their JSON text.
    #[test]
    fn rows_round_trip_through_the_reader() {
        let rows = vec![
            obj(json!({"instance_id": "a", "n": 3, "x": 1.5, "ok": true,
                       "FAIL_TO_PASS": ["t::a", "t::b"], "ci": [0.5, 0.75]})),
            obj(json!({"instance_id": "b", "n": null, "x": 2, "ok": false,
                       "FAIL_TO_PASS": [], "ci": null})),
        ];
        let cols = [
            "instance_id",
            "n",
            "x",
            "ok",
            "FAIL_TO_PASS",
            "ci",
            "absent",
        ];
        let bytes = to_parquet(&cols, &rows).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        std::fs::write(&path, bytes).unwrap();
        let back = crate::read_records(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0]["instance_id"], "a");
        assert_eq!(back[0]["n"], 3);
        assert_eq!(back[1]["n"], Value::Null);
        assert_eq!(back[0]["x"], 1.5);
        assert_eq!(back[1]["x"], 2.0);
        assert_eq!(back[1]["ok"], false);
        assert_eq!(back[0]["FAIL_TO_PASS"], r#"["t::a","t::b"]"#);
        assert_eq!(back[0]["ci"], "[0.5,0.75]");
        assert_eq!(back[0]["absent"], Value::Null);
    }

    #[test]
    fn a_field_without_a_column_is_refused() {
        let rows = vec![obj(json!({"instance_id": "a", "surprise": 1}))];
        let e = to_parquet(&["instance_id"], &rows).unwrap_err();
        assert!(e.to_string().contains("surprise"), "{e}");
    }
}
