//! Parquet files through the `parquet` crate's column writers (no Arrow: it would
//! triple the build for nothing these flat tables need). Every column is OPTIONAL;
//! types: signed → INT64, unsigned → INT64 annotated `UINT_64`, floats → DOUBLE,
//! text → BYTE_ARRAY annotated `STRING`, booleans → BOOLEAN; a column with only
//! nulls in the first batch is STRING. A column holding a point in time in ns since
//! the Epoch (`ts`, `begin_ns`, `end_ns`) is followed by the same instant as
//! `TIMESTAMP(NANOS)` adjusted to UTC (`ts_time`, `begin_time`, `end_time`), which
//! DuckDB, pandas and Spark read as times. Snappy-compressed, one row group per batch.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::table::{Table, Value, Values};
use crate::{ExportError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    UInt,
    Float,
    Text,
    Bool,
    /// The instant of an integer ns column, as `TIMESTAMP(NANOS)`.
    Timestamp,
}

/// One column of the file: its name, type, and the table column it is written from.
struct Col {
    name: String,
    kind: Kind,
    source: String,
}

/// The name of the timestamp column that follows `name`, when `name` holds a point in
/// time in ns since the Epoch.
fn timestamp_name(name: &str) -> Option<String> {
    match name {
        "ts" => Some("ts_time".into()),
        "begin_ns" | "end_ns" => Some(format!("{}_time", name.trim_end_matches("_ns"))),
        _ => None,
    }
}

fn kind_of(v: &Values) -> Kind {
    match v {
        Values::Int(_) => Kind::Int,
        Values::UInt(_) => Kind::UInt,
        Values::Float(_) => Kind::Float,
        Values::Bool(_) => Kind::Bool,
        Values::Text(_) | Values::Unknown(_) => Kind::Text,
    }
}

fn err(path: &Path) -> impl FnOnce(parquet::errors::ParquetError) -> ExportError + '_ {
    move |e| ExportError::Parquet { path: path.into(), reason: e.to_string() }
}

/// A Parquet file whose columns are those of its first batch.
pub(crate) struct ParquetOut {
    w: SerializedFileWriter<File>,
    cols: Vec<Col>,
}

impl ParquetOut {
    /// Starts a file with the columns (and types) of `first`.
    pub(crate) fn new(file: File, first: &Table, path: &Path) -> Result<ParquetOut> {
        let mut cols: Vec<Col> = Vec::new();
        for c in &first.columns {
            let kind = kind_of(&c.values);
            cols.push(Col { name: c.name.clone(), kind, source: c.name.clone() });
            if let (Some(t), Kind::Int | Kind::UInt) = (timestamp_name(&c.name), kind) {
                if first.columns.iter().all(|o| o.name != t) {
                    cols.push(Col { name: t, kind: Kind::Timestamp, source: c.name.clone() });
                }
            }
        }
        let fields = cols
            .iter()
            .map(|Col { name, kind, .. }| {
                let (phys, logical) = match kind {
                    Kind::Int => (Physical::INT64, Some(LogicalType::Integer { bit_width: 64, is_signed: true })),
                    Kind::UInt => (Physical::INT64, Some(LogicalType::Integer { bit_width: 64, is_signed: false })),
                    Kind::Float => (Physical::DOUBLE, None),
                    Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                    Kind::Bool => (Physical::BOOLEAN, None),
                    Kind::Timestamp => (
                        Physical::INT64,
                        Some(LogicalType::Timestamp { is_adjusted_to_u_t_c: true, unit: parquet::basic::TimeUnit::NANOS(Default::default()) }),
                    ),
                };
                Type::primitive_type_builder(name, phys).with_repetition(Repetition::OPTIONAL).with_logical_type(logical).build().map(Arc::new)
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err(path))?;
        let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build().map_err(err(path))?);
        let props = Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).set_created_by("tracecube".into()).build());
        let w = SerializedFileWriter::new(file, schema, props).map_err(err(path))?;
        Ok(ParquetOut { w, cols })
    }

    /// The table columns the file's columns are written from.
    pub(crate) fn column_names(&self) -> Vec<String> {
        self.cols.iter().map(|c| c.source.clone()).collect()
    }

    /// Writes `t` as one row group (its columns matched by name; missing ones null;
    /// a value of another type than the column's is written as text in a text
    /// column, else null).
    pub(crate) fn write(&mut self, t: &Table, path: &Path) -> Result<()> {
        if t.rows() == 0 {
            return Ok(());
        }
        let n = t.rows();
        let mut rg = self.w.next_row_group().map_err(err(path))?;
        for Col { kind, source, .. } in &self.cols {
            let Some(mut col) = rg.next_column().map_err(err(path))? else { break };
            let src = t.columns.iter().find(|c| &c.name == source).map(|c| &c.values);
            let get = |r: usize| src.map_or(Value::Null, |v| v.get(r));
            match kind {
                Kind::Int | Kind::UInt | Kind::Timestamp => {
                    let (vals, defs) = levels(n, |r| match get(r) {
                        Value::Int(x) => Some(x),
                        // Unsigned values keep their bits (UINT_64 annotation).
                        Value::UInt(x) => Some(x as i64),
                        _ => None,
                    });
                    col.typed::<Int64Type>().write_batch(&vals, Some(&defs), None).map_err(err(path))?;
                }
                Kind::Float => {
                    let (vals, defs) = levels(n, |r| match get(r) {
                        Value::Float(x) => Some(x),
                        Value::Int(x) => Some(x as f64),
                        Value::UInt(x) => Some(x as f64),
                        _ => None,
                    });
                    col.typed::<DoubleType>().write_batch(&vals, Some(&defs), None).map_err(err(path))?;
                }
                Kind::Bool => {
                    let (vals, defs) = levels(n, |r| match get(r) {
                        Value::Bool(x) => Some(x),
                        _ => None,
                    });
                    col.typed::<BoolType>().write_batch(&vals, Some(&defs), None).map_err(err(path))?;
                }
                Kind::Text => {
                    let (vals, defs) = levels(n, |r| {
                        let s = match get(r) {
                            Value::Null => return None,
                            Value::Text(s) => s,
                            Value::Int(x) => x.to_string(),
                            Value::UInt(x) => x.to_string(),
                            Value::Float(x) => x.to_string(),
                            Value::Bool(x) => x.to_string(),
                        };
                        Some(ByteArray::from(s.into_bytes()))
                    });
                    col.typed::<ByteArrayType>().write_batch(&vals, Some(&defs), None).map_err(err(path))?;
                }
            }
            col.close().map_err(err(path))?;
        }
        rg.close().map_err(err(path))?;
        Ok(())
    }

    /// Writes the footer.
    pub(crate) fn finish(self, path: &Path) -> Result<()> {
        self.w.close().map_err(err(path))?;
        Ok(())
    }
}

/// A column's non-null values and its definition levels (1: present, 0: null) over rows
/// `0..n`, from each row's value (`None`: null).
fn levels<T>(n: usize, mut value: impl FnMut(usize) -> Option<T>) -> (Vec<T>, Vec<i16>) {
    let (mut vals, mut defs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for r in 0..n {
        let x = value(r);
        defs.push(x.is_some() as i16);
        vals.extend(x);
    }
    (vals, defs)
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use crate::sink::{write_table, Format, TableFile};
    use crate::table::{Table, Value};

    #[test]
    fn types_nulls_and_batches_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Table::new("t");
        t.push_row([
            ("i", Value::Int(-5)),
            ("u", Value::UInt(u64::MAX)),
            ("f", Value::Float(0.5)),
            ("s", Value::Text("é".into())),
            ("b", Value::Bool(true)),
            ("n", Value::Null),
        ]);
        t.push_row([("i", Value::Null), ("u", Value::UInt(7)), ("s", Value::Null)]);
        let mut f = TableFile::create(dir.path(), "t", Format::Parquet).unwrap();
        f.write(&t).unwrap();
        let mut more = t.emptied();
        more.push_row([("i", Value::Int(9)), ("n", Value::UInt(3))]);
        f.write(&more).unwrap();
        let path = f.finish().unwrap();
        let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(r.metadata().num_row_groups(), 2);
        assert_eq!(r.metadata().file_metadata().num_rows(), 3);
        let rows: Vec<String> = r.get_row_iter(None).unwrap().map(|row| row.unwrap().to_string()).collect();
        assert_eq!(rows[0], "{i: -5, u: 18446744073709551615, f: 0.5, s: \"é\", b: true, n: null}");
        assert_eq!(rows[1], "{i: null, u: 7, f: null, s: null, b: null, n: null}");
        // `n` was all null in the first batch, so it is text.
        assert_eq!(rows[2], "{i: 9, u: null, f: null, s: null, b: null, n: \"3\"}");
        let empty = write_table(dir.path(), &t.emptied(), Format::Parquet).unwrap();
        // Points in time are followed by the same instant as TIMESTAMP(NANOS), UTC.
        let mut w = Table::new("w");
        w.push_row([("begin_ns", Value::UInt(1_457_113_582_794_565_804)), ("cpu_ns", Value::UInt(5))]);
        let path = write_table(dir.path(), &w, Format::Parquet).unwrap();
        let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let schema = r.metadata().file_metadata().schema_descr();
        let names: Vec<String> = (0..schema.num_columns()).map(|i| schema.column(i).name().to_string()).collect();
        assert_eq!(names, ["begin_ns", "begin_time", "cpu_ns"], "a duration (cpu_ns) gets no timestamp");
        assert!(matches!(schema.column(1).logical_type(), Some(parquet::basic::LogicalType::Timestamp { is_adjusted_to_u_t_c: true, .. })));
        let row = r.get_row_iter(None).unwrap().next().unwrap().unwrap().to_string();
        assert!(row.contains("begin_time: ") && !row.contains("begin_time: null"), "{row}");
        let r = SerializedFileReader::new(std::fs::File::open(&empty).unwrap()).unwrap();
        assert_eq!(r.metadata().file_metadata().num_rows(), 0);
        assert_eq!(r.metadata().file_metadata().schema_descr().num_columns(), 6);
    }
}
