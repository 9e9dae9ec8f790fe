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
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Run this query (statements separated by `;`) and exit.
    #[arg(short = 'e', long = "execute", conflicts_with = "file")]
    pub execute: Option<String>,
    /// Run the queries of this file and exit.
    #[arg(short = 'f', long)]
    pub file: Option<PathBuf>,
    /// Output format: table, csv or json (JSON lines).
    #[arg(long, default_value = "table")]
    pub format: Format,
    /// Write results to this file instead of standard output.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Partitions of a scan, one thread each (0: one per core).
    #[arg(short = 'j', long, default_value_t = 0)]
    pub jobs: usize,
}

/// Runs `sql`.
pub fn run(a: SqlArgs) -> Result<()> {
    let s = SqlSession::open(&a.traces, a.jobs)?;
    for w in &s.warnings {
        eprintln!("tracecube: warning: {w}");
    }
    let script = match (&a.execute, &a.file) {
        (Some(q), _) => Some(q.clone()),
        (None, Some(f)) => Some(std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?),
        (None, None) => None,
    };
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
