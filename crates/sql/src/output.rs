//! Writing query results: an aligned table (Arrow's pretty printer), CSV with a header
//! line, or JSON lines (one object per row), the last two streamed batch by batch.
//! ([`Format::Parquet`] is written by the `tracecube` binary, through the `export`
//! crate's Parquet writer: [`ResultWriter`] refuses it.)

use std::io::Write;

use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::json::{ArrayWriter, LineDelimitedWriter};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;

use crate::SqlError;

/// An output format of query results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// An aligned table (the whole result is held to size its columns).
    #[default]
    Table,
    /// CSV with a header line.
    Csv,
    /// JSON lines: one object per row.
    Json,
    /// An Apache Parquet file (to a file only; not by [`ResultWriter`]).
    Parquet,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "parquet" => Ok(Format::Parquet),
            _ => Err(format!("unknown format {s:?} (expected table, csv, json or parquet)")),
        }
    }
}

/// Writes the batches of one result in a format.
pub struct ResultWriter<W: Write> {
    format: Format,
    out: W,
    held: Vec<RecordBatch>,
    csv_header: bool,
    rows: usize,
}

fn out_err(e: impl std::fmt::Display) -> SqlError {
    SqlError::Output(e.to_string())
}

impl<W: Write> ResultWriter<W> {
    /// A writer of `format` into `out`.
    pub fn new(format: Format, out: W) -> ResultWriter<W> {
        ResultWriter { format, out, held: Vec::new(), csv_header: true, rows: 0 }
    }

    /// Writes (or, for a table, holds) one batch.
    pub fn write(&mut self, b: RecordBatch) -> Result<(), SqlError> {
        self.rows += b.num_rows();
        match self.format {
            Format::Table => self.held.push(b),
            Format::Csv => {
                let mut w = WriterBuilder::new().with_header(self.csv_header).build(&mut self.out);
                w.write(&b).map_err(out_err)?;
                self.csv_header = false;
            }
            Format::Json => {
                let mut w = LineDelimitedWriter::new(&mut self.out);
                w.write(&b).map_err(out_err)?;
                w.finish().map_err(out_err)?;
            }
            Format::Parquet => return Err(SqlError::Output("Parquet is written to a file (-o FILE), one query at a time".into())),
        }
        Ok(())
    }

    /// Ends the result (prints a held table); returns the number of rows written.
    pub fn finish(mut self) -> Result<usize, SqlError> {
        if self.format == Format::Table {
            let t = pretty_format_batches(&self.held).map_err(out_err)?;
            writeln!(self.out, "{t}").map_err(out_err)?;
        }
        self.out.flush().map_err(out_err)?;
        Ok(self.rows)
    }
}

/// A bounded answer as one JSON document: `{"columns": [names], "rows": [objects],
/// "truncated": bool}` (the form of `POST /api/sql`).
pub fn json_answer(b: &crate::Bounded) -> Result<serde_json::Value, SqlError> {
    let mut w = ArrayWriter::new(Vec::new());
    for batch in &b.batches {
        w.write(batch).map_err(out_err)?;
    }
    w.finish().map_err(out_err)?;
    let bytes = w.into_inner();
    let rows: serde_json::Value = if bytes.is_empty() { serde_json::Value::Array(Vec::new()) } else { serde_json::from_slice(&bytes).map_err(out_err)? };
    Ok(serde_json::json!({ "columns": b.columns, "rows": rows, "truncated": b.truncated }))
}
