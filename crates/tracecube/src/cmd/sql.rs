//! `tracecube sql`: SQL over traces and analyses (the `sql` crate), from `-e`, a file,
//! or an interactive shell with history and completion of table and column names.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use sql::output::ResultWriter;
use sql::{Format, SqlSession};

/// Arguments of `sql`.
#[derive(clap::Args)]
pub struct SqlArgs {
    /// Trace directories; each adds its traces to every table, told apart by the
    /// `trace` column (the host name).
    #[arg(required_unless_present = "cube")]
    pub traces: Vec<PathBuf>,
    /// A statistics cube directory (made by `cube build`): adds the table function
    /// `cube_series(metric, every [, by [, agg]])`, the answers of `query --every` as a
    /// table (not with --cluster).
    #[arg(long, value_name = "DIR")]
    pub cube: Option<PathBuf>,
    /// Run this query (statements separated by `;`) and exit.
    #[arg(short = 'e', long = "execute", conflicts_with = "file")]
    pub execute: Option<String>,
    /// Run the queries of this file and exit.
    #[arg(short = 'f', long)]
    pub file: Option<PathBuf>,
    /// Output format: table, csv, json (JSON lines) or parquet (one query, to the file
    /// given by `-o`).
    #[arg(long, default_value = "table")]
    pub format: Format,
    /// Write results to this file instead of standard output.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Partitions of a scan, one thread each (0: one per core; on a cluster, 16).
    #[arg(short = 'j', long, default_value_t = 0)]
    pub jobs: usize,
    /// Run the queries on the Ballista cluster whose scheduler is at this address
    /// (`df://HOST:PORT`, see `tracecube cluster`); every executor must read the trace
    /// directories at the paths given.
    #[cfg(feature = "cluster")]
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
}

/// The session of `a`: local, or on the cluster it names.
fn open(a: &SqlArgs) -> Result<SqlSession> {
    if let Some(t) = a.traces.iter().find(|t| cube::file::is_cube(t)) {
        anyhow::bail!("{} is a cube directory, not a trace: give it with --cube", t.display());
    }
    #[cfg(feature = "cluster")]
    if let Some(url) = &a.cluster {
        anyhow::ensure!(a.cube.is_none(), "--cube works on a local session only, not with --cluster");
        super::cluster::ignore_sigpipe();
        return Ok(fleet::client::open(url, &a.traces, a.jobs)?);
    }
    let s = SqlSession::open(&a.traces, a.jobs)?;
    if let Some(dir) = &a.cube {
        s.add_cube(dir)?;
    }
    Ok(s)
}

/// Runs `sql`.
pub fn run(a: SqlArgs) -> Result<()> {
    let s = open(&a)?;
    for w in &s.warnings {
        eprintln!("tracecube: warning: {w}");
    }
    let script = match (&a.execute, &a.file) {
        (Some(q), _) => Some(q.clone()),
        (None, Some(f)) => Some(std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?),
        (None, None) => None,
    };
    if a.format == Format::Parquet {
        let (Some(text), Some(path)) = (&script, &a.output) else { anyhow::bail!("--format parquet needs a query (-e or -f) and a file (-o FILE)") };
        let [q] = statements(text)[..] else { anyhow::bail!("--format parquet writes one query's result: give one statement") };
        let rows = parquet::write(&s, q, path)?;
        eprintln!("tracecube: {rows} rows written to {}", path.display());
        return Ok(());
    }
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(BufWriter::new(File::create(p).with_context(|| format!("creating {}", p.display()))?)),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    match script {
        Some(text) => {
            for q in statements(&text) {
                run_one(&s, q, a.format, &mut out)?;
            }
            Ok(())
        }
        None => shell::run(&s, a.format, &mut out),
    }
}

/// Runs one statement, writing its result.
fn run_one(s: &SqlSession, q: &str, format: Format, out: &mut dyn Write) -> Result<usize> {
    let mut w = ResultWriter::new(format, out);
    s.query_each(q, |b| w.write(b))?;
    Ok(w.finish()?)
}

/// The statements of a script: split at `;` outside quotes, blank ones dropped.
fn statements(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (';', None) => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter().map(str::trim).filter(|q| !q.is_empty()).collect()
}

/// `--format parquet`: a result through the `export` crate's Parquet writer.
mod parquet {
    use std::path::Path;

    use anyhow::{Context, Result};
    use export::{Table, TableFile, Value};
    use sql::arrow::array::{Array, ArrayRef, AsArray};
    use sql::arrow::compute::cast;
    use sql::arrow::datatypes::{DataType, Float64Type, Int64Type, UInt64Type};
    use sql::arrow::record_batch::RecordBatch;
    use sql::arrow::util::display::array_value_to_string;
    use sql::SqlSession;

    /// Runs `q` and writes its result to the Parquet file `path`, batch by batch (a
    /// column's type is its first batch's: integers as 64-bit, floats as doubles,
    /// booleans, and text for text and every other type). Returns the rows written.
    pub fn write(s: &SqlSession, q: &str, path: &Path) -> Result<u64> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let stem = path.file_stem().map_or_else(|| "result".into(), |n| n.to_string_lossy().into_owned());
        let mut file = TableFile::create(dir, &stem, export::Format::Parquet)?;
        let written = file.path().to_path_buf();
        let mut table = Table::new(&stem);
        s.query_each(q, |b| {
            table = table.emptied();
            fill(&mut table, &b).map_err(|e| sql::SqlError::Output(e.to_string()))?;
            file.write(&table).map_err(|e| sql::SqlError::Output(e.to_string()))
        })?;
        let rows = file.rows;
        let done = file.finish()?;
        anyhow::ensure!(rows > 0, "the query returned no rows: no Parquet file written");
        if done.as_path() != path {
            std::fs::rename(&written, path).with_context(|| format!("renaming {} to {}", written.display(), path.display()))?;
        }
        Ok(rows)
    }

    /// Appends the rows of `b` to `t`.
    fn fill(t: &mut Table, b: &RecordBatch) -> Result<()> {
        let schema = b.schema();
        let cols: Vec<(&str, Column)> = schema.fields().iter().zip(b.columns()).map(|(f, a)| Ok((f.name().as_str(), Column::of(a)?))).collect::<Result<_>>()?;
        for i in 0..b.num_rows() {
            t.push_row(cols.iter().map(|(n, c)| (*n, c.value(i))));
        }
        Ok(())
    }

    /// An Arrow column cast to the export's types.
    enum Column {
        Int(ArrayRef),
        UInt(ArrayRef),
        Float(ArrayRef),
        Bool(ArrayRef),
        Text(ArrayRef),
        Other(ArrayRef),
    }

    impl Column {
        fn of(a: &ArrayRef) -> Result<Column> {
            use DataType::*;
            Ok(match a.data_type() {
                Int8 | Int16 | Int32 | Int64 => Column::Int(cast(a, &Int64)?),
                UInt8 | UInt16 | UInt32 | UInt64 => Column::UInt(cast(a, &UInt64)?),
                Float16 | Float32 | Float64 => Column::Float(cast(a, &Float64)?),
                Boolean => Column::Bool(a.clone()),
                Utf8 | LargeUtf8 | Utf8View => Column::Text(cast(a, &Utf8)?),
                _ => Column::Other(a.clone()),
            })
        }

        fn value(&self, i: usize) -> Value {
            let a = match self {
                Column::Int(a) | Column::UInt(a) | Column::Float(a) | Column::Bool(a) | Column::Text(a) | Column::Other(a) => a,
            };
            if a.is_null(i) {
                return Value::Null;
            }
            match self {
                Column::Int(a) => Value::Int(a.as_primitive::<Int64Type>().value(i)),
                Column::UInt(a) => Value::UInt(a.as_primitive::<UInt64Type>().value(i)),
                Column::Float(a) => Value::Float(a.as_primitive::<Float64Type>().value(i)),
                Column::Bool(a) => Value::Bool(a.as_boolean().value(i)),
                Column::Text(a) => Value::Text(a.as_string::<i32>().value(i).to_string()),
                Column::Other(a) => array_value_to_string(a, i).map_or(Value::Null, Value::Text),
            }
        }
    }
}

/// The interactive shell.
mod shell {
    use std::io::Write;

    use anyhow::Result;
    use rustyline::completion::{Completer, Pair};
    use rustyline::error::ReadlineError;
    use rustyline::history::DefaultHistory;
    use rustyline::{Editor, Helper, Highlighter, Hinter, Validator};
    use sql::{Format, SqlSession};

    /// Completes table and column names (and a few keywords).
    #[derive(Helper, Highlighter, Hinter, Validator)]
    struct Names {
        words: Vec<String>,
    }

    impl Completer for Names {
        type Candidate = Pair;
        fn complete(&self, line: &str, pos: usize, _ctx: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
            let start = line[..pos].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let word = &line[start..pos];
            let lower = word.to_ascii_lowercase();
            let found = self
                .words
                .iter()
                .filter(|w| !word.is_empty() && w.to_ascii_lowercase().starts_with(&lower))
                .map(|w| Pair { display: w.clone(), replacement: w.clone() })
                .collect();
            Ok((start, found))
        }
    }

    /// Keywords offered with the names.
    const KEYWORDS: &[&str] = &["SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "COUNT", "DESC", "JOIN", "HAVING", "SHOW TABLES", "DESCRIBE"];

    /// Reads statements until `\q`, end of input or Ctrl-D; a failed statement prints
    /// its error and the shell goes on.
    pub fn run(s: &SqlSession, format: Format, out: &mut dyn Write) -> Result<()> {
        let mut words = s.table_names();
        words.extend(s.column_names());
        let functions = s.function_names();
        if functions.iter().any(|f| f == sql::cube_series::NAME) {
            words.extend(sql::cube_series::COLUMNS.map(String::from));
        }
        words.extend(functions);
        words.extend(KEYWORDS.iter().map(|k| k.to_string()));
        let mut ed: Editor<Names, DefaultHistory> = Editor::new()?;
        ed.set_helper(Some(Names { words }));
        let history = std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".tracecube_sql_history"));
        if let Some(h) = &history {
            let _ = ed.load_history(h);
        }
        eprintln!("tracecube sql: {} tables (`SHOW TABLES`, `DESCRIBE events`); end statements with `;`, `\\q` quits", s.table_names().len());
        let mut pending = String::new();
        loop {
            let prompt = if pending.is_empty() { "sql> " } else { "  -> " };
            match ed.readline(prompt) {
                Ok(line) => {
                    let t = line.trim();
                    if pending.is_empty() && (t == "\\q" || t == "quit" || t == "exit") {
                        break;
                    }
                    pending.push_str(&line);
                    pending.push('\n');
                    if !t.ends_with(';') {
                        continue;
                    }
                    let _ = ed.add_history_entry(pending.trim());
                    for q in super::statements(&pending) {
                        if let Err(e) = super::run_one(s, q, format, out) {
                            eprintln!("error: {e:#}");
                        }
                    }
                    pending.clear();
                }
                Err(ReadlineError::Interrupted) => pending.clear(),
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(h) = &history {
            let _ = ed.save_history(h);
        }
        Ok(())
    }
}
