//! Writing tables to files, batch by batch: CSV (RFC 4180 by the `csv` crate, a header line), JSON
//! (an array of row objects, as pandas' `orient="records"` and DuckDB's
//! `read_json` read it) and Parquet (feature `parquet`; one row group per batch).
//!
//! The first batch fixes the columns of CSV and Parquet files; a later batch's
//! values for columns the file does not have are counted in
//! [`TableFile::dropped`] (the exports here never produce any).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::table::{Table, Value};
use crate::{ExportError, Result};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of objects, one per row.
    Json,
    /// Apache Parquet (needs the `parquet` feature).
    Parquet,
}

impl Format {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Parquet => "parquet",
        }
    }

    /// Whether this build can write the format.
    pub fn available(self) -> bool {
        self != Format::Parquet || cfg!(feature = "parquet")
    }
}

impl std::str::FromStr for Format {
    type Err = ExportError;
    fn from_str(s: &str) -> Result<Format> {
        match s {
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "parquet" => Ok(Format::Parquet),
            _ => Err(ExportError::Usage(format!("unknown format {s:?} (parquet, csv or json)"))),
        }
    }
}

enum Inner {
    Csv {
        w: csv::Writer<File>,
        columns: Option<Vec<String>>,
    },
    Json {
        w: BufWriter<File>,
        rows: u64,
    },
    #[cfg(feature = "parquet")]
    Parquet {
        out: Option<crate::parquet_out::ParquetOut>,
        file: Option<File>,
    },
}

/// One table being written to `DIR/NAME.EXT`.
pub struct TableFile {
    path: PathBuf,
    inner: Inner,
    /// Values left out because their column was not in the file's first batch.
    pub dropped: u64,
    /// Rows written.
    pub rows: u64,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io { path: path.into(), source }
}

/// A file name made of the table name's letters, digits, `_`, `-` and `.`.
pub fn file_stem(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

impl TableFile {
    /// Creates `dir/NAME.EXT` for table `name` (the directory is created).
    pub fn create(dir: &Path, name: &str, format: Format) -> Result<TableFile> {
        if !format.available() {
            return Err(no_parquet());
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join(format!("{}.{}", file_stem(name), format.extension()));
        let file = File::create(&path).map_err(io(&path))?;
        let inner = match format {
            Format::Csv => Inner::Csv { w: csv::Writer::from_writer(file), columns: None },
            Format::Json => {
                let mut w = BufWriter::new(file);
                w.write_all(b"[").map_err(io(&path))?;
                Inner::Json { w, rows: 0 }
            }
            #[cfg(feature = "parquet")]
            Format::Parquet => Inner::Parquet { out: None, file: Some(file) },
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => return Err(no_parquet()),
        };
        Ok(TableFile { path, inner, dropped: 0, rows: 0 })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the rows of `t`.
    pub fn write(&mut self, t: &Table) -> Result<()> {
        let path = self.path.clone();
        match &mut self.inner {
            Inner::Csv { w, columns } => {
                let first = columns.is_none();
                let cols = columns.get_or_insert_with(|| t.columns.iter().map(|c| c.name.clone()).collect());
                if first {
                    w.write_record(cols.iter()).map_err(csv_err(&path))?;
                }
                let idx: Vec<Option<usize>> = cols.iter().map(|n| t.columns.iter().position(|c| &c.name == n)).collect();
                self.dropped += count_dropped(t, cols);
                let mut record: Vec<String> = Vec::with_capacity(idx.len());
                for r in 0..t.rows() {
                    record.clear();
                    record.extend(idx.iter().map(|i| i.map_or(String::new(), |i| csv_value(&t.columns[i].values.get(r)))));
                    w.write_record(&record).map_err(csv_err(&path))?;
                }
            }
            Inner::Json { w, rows } => {
                for r in 0..t.rows() {
                    let obj: serde_json::Map<String, serde_json::Value> = t.columns.iter().map(|c| (c.name.clone(), json_value(c.values.get(r)))).collect();
                    w.write_all(if *rows == 0 { b"\n" } else { b",\n" }).map_err(io(&path))?;
                    serde_json::to_writer(&mut *w, &obj).map_err(|e| io(&path)(e.into()))?;
                    *rows += 1;
                }
            }
            #[cfg(feature = "parquet")]
            Inner::Parquet { out, file } => {
                if let Some(f) = file.take() {
                    *out = Some(crate::parquet_out::ParquetOut::new(f, t, &path)?);
                }
                if let Some(o) = out {
                    self.dropped += count_dropped(t, &o.column_names());
                    o.write(t, &path)?;
                }
            }
        }
        self.rows += t.rows() as u64;
        Ok(())
    }

    /// Completes the file; returns its path.
    pub fn finish(self) -> Result<PathBuf> {
        let path = self.path;
        match self.inner {
            Inner::Csv { mut w, .. } => w.flush().map_err(io(&path))?,
            Inner::Json { mut w, .. } => {
                w.write_all(b"\n]\n").map_err(io(&path))?;
                w.flush().map_err(io(&path))?
            }
            #[cfg(feature = "parquet")]
            Inner::Parquet { out, file } => match out {
                Some(o) => o.finish(&path)?,
                // No batch at all: a table without columns cannot be a Parquet
                // file; leave nothing.
                None => {
                    drop(file);
                    std::fs::remove_file(&path).map_err(io(&path))?;
                }
            },
        }
        Ok(path)
    }
}

fn no_parquet() -> ExportError {
    ExportError::Usage("this tracecube was built without Parquet support (cargo feature `parquet`)".into())
}

/// Non-null values of `t` in columns outside `cols`.
fn count_dropped(t: &Table, cols: &[String]) -> u64 {
    t.columns.iter().filter(|c| !cols.contains(&c.name)).map(|c| (0..t.rows()).filter(|&r| c.values.get(r) != Value::Null).count() as u64).sum()
}

/// Writes a whole table to `dir`; returns the file's path.
pub fn write_table(dir: &Path, t: &Table, format: Format) -> Result<PathBuf> {
    let mut f = TableFile::create(dir, &t.name, format)?;
    f.write(t)?;
    f.finish()
}

fn csv_err(path: &Path) -> impl FnOnce(csv::Error) -> ExportError + '_ {
    move |e| match e.into_kind() {
        csv::ErrorKind::Io(e) => io(path)(e),
        other => io(path)(std::io::Error::other(format!("{other:?}"))),
    }
}

/// A value as a CSV field's text (null: empty); quoting is the `csv` crate's.
fn csv_value(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Int(x) => x.to_string(),
        Value::UInt(x) => x.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Bool(x) => x.to_string(),
        Value::Text(s) => s.clone(),
    }
}

fn json_value(v: Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Int(x) => x.into(),
        Value::UInt(x) => x.into(),
        Value::Float(x) => serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Bool(x) => x.into(),
        Value::Text(s) => s.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new("a/b c");
        t.push_row([("name", Value::Text("x,\"y\"".into())), ("n", Value::UInt(3))]);
        t.push_row([("name", Value::Text("z".into())), ("n", Value::Null), ("r", Value::Float(0.25))]);
        t
    }

    #[test]
    fn csv_quotes_and_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let p = write_table(dir.path(), &table(), Format::Csv).unwrap();
        assert_eq!(p.file_name().unwrap(), "a_b_c.csv");
        assert_eq!(std::fs::read_to_string(p).unwrap(), "name,n,r\n\"x,\"\"y\"\"\",3,\nz,,0.25\n");
    }

    #[test]
    fn json_is_an_array_of_records() {
        let dir = tempfile::tempdir().unwrap();
        let p = write_table(dir.path(), &table(), Format::Json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!([{"name":"x,\"y\"","n":3,"r":null},{"name":"z","n":null,"r":0.25}]));
        let empty = write_table(dir.path(), &Table::new("e"), Format::Json).unwrap();
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&std::fs::read(empty).unwrap()).unwrap(), serde_json::json!([]));
    }

    #[test]
    #[cfg(not(feature = "parquet"))]
    fn parquet_without_the_feature_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_table(dir.path(), &table(), Format::Parquet).err().unwrap();
        assert!(e.to_string().contains("without Parquet support"), "{e}");
    }

    #[test]
    fn formats_parse() {
        assert_eq!("csv".parse::<Format>().unwrap(), Format::Csv);
        assert!("xlsx".parse::<Format>().is_err());
        assert_eq!(file_stem(".."), "_..");
    }
}
