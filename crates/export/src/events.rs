//! Decoded events as tables, one per event class (by event name), for people who
//! want raw events in DuckDB: `SELECT prev_comm, count(*) FROM 'sched_switch.parquet'`.
//!
//! Columns: `ts` (ns from the Epoch, null without a clock), `stream_cpu_id` (the
//! packet context's `cpu_id`, when the stream has one), the stream event context's
//! fields prefixed `sec_`, the event context's prefixed `ec_`, then the payload's
//! fields under their own names. Nested structures are flattened with `_`; arrays
//! and sequences are JSON text; enumerations are their integer value; variants the
//! value of their selected option. Events come in time order (the merge of
//! `tracecube dump`); each table is written in batches of [`BATCH_ROWS`] rows, so
//! memory stays bounded by the number of event classes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ctf::decode::Visitor;
use ctf::merge::Merger;
use ctf::plan::{Node, NodeId, Plan};
use ctf::stream::{EventRef, EventScope, Item};
use ctf::trace::TraceSet;

use crate::sink::{Format, TableFile};
use crate::table::{Table, Value};
use crate::Result;

/// Rows buffered per table before they are written.
pub const BATCH_ROWS: usize = 65_536;

/// What an event export wrote.
#[derive(Debug, Default)]
pub struct EventsReport {
    /// Per table (event name, sorted): its file and row count.
    pub tables: Vec<(String, PathBuf, u64)>,
    /// Discarded-events and lost-packets notices skipped (not events).
    pub notices: u64,
    /// Values stored as null because their type changed within a column, or left
    /// out because their column appeared after the first batch.
    pub lost_values: u64,
    /// The errors that ended streams (each naming its file and offset), one per
    /// stream, streams without a readable packet included: every other stream was
    /// exported whole, and a damaged one up to its damage.
    pub stream_errors: Vec<ctf::error::Error>,
}

/// A decoded field value as a small tree, flattened into columns afterwards.
enum Tree {
    Leaf(Value),
    Struct(Vec<(String, Tree)>),
    Array(Vec<Tree>),
}

impl Tree {
    fn to_json(&self) -> serde_json::Value {
        match self {
            Tree::Leaf(Value::Null) => serde_json::Value::Null,
            Tree::Leaf(Value::Int(x)) => (*x).into(),
            Tree::Leaf(Value::UInt(x)) => (*x).into(),
            Tree::Leaf(Value::Float(x)) => serde_json::Number::from_f64(*x).map_or(serde_json::Value::Null, serde_json::Value::Number),
            Tree::Leaf(Value::Bool(x)) => (*x).into(),
            Tree::Leaf(Value::Text(s)) => s.clone().into(),
            Tree::Struct(m) => serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Tree::Array(a) => serde_json::Value::Array(a.iter().map(Tree::to_json).collect()),
        }
    }

    /// Appends `(column, value)` pairs: struct members flattened under `prefix`.
    fn flatten(self, prefix: &str, out: &mut Vec<(String, Value)>) {
        match self {
            Tree::Struct(m) => {
                for (k, v) in m {
                    let name = if prefix.is_empty() { k } else { format!("{prefix}_{k}") };
                    v.flatten(&name, out);
                }
            }
            Tree::Leaf(v) => out.push((prefix.to_string(), v)),
            a @ Tree::Array(_) => out.push((prefix.to_string(), Value::Text(a.to_json().to_string()))),
        }
    }
}

/// Builds the [`Tree`] of one scope from the decoder's callbacks.
struct TreeVisitor<'p> {
    plan: &'p Plan,
    /// Open containers, with the member name pending in structures.
    stack: Vec<(Tree, Option<String>)>,
    root: Option<Tree>,
}

impl TreeVisitor<'_> {
    fn put(&mut self, t: Tree) {
        match self.stack.last_mut() {
            Some((Tree::Struct(m), key)) => m.push((key.take().unwrap_or_default(), t)),
            Some((Tree::Array(a), _)) => a.push(t),
            _ => self.root = Some(t),
        }
    }
}

impl Visitor for TreeVisitor<'_> {
    fn int(&mut self, _plan: &Plan, node: &Node, raw: u64) {
        let v = match *node {
            Node::Int { boolean: true, .. } => Value::Bool(raw != 0),
            Node::Int { signed: true, .. } | Node::VarInt { signed: true, .. } => Value::Int(raw as i64),
            _ => Value::UInt(raw),
        };
        self.put(Tree::Leaf(v));
    }
    fn float(&mut self, v: f64) {
        self.put(Tree::Leaf(Value::Float(v)));
    }
    fn string(&mut self, node: NodeId, bytes: &[u8]) {
        let s = match self.plan.node(node) {
            Node::Str { unit, be, .. } if *unit > 1 => ctf::dump::decode_wide(bytes, *unit, *be),
            _ => String::from_utf8_lossy(bytes).into_owned(),
        };
        self.put(Tree::Leaf(Value::Text(s)));
    }
    fn null(&mut self) {
        self.put(Tree::Leaf(Value::Null));
    }
    fn begin_struct(&mut self) {
        self.stack.push((Tree::Struct(Vec::new()), None));
    }
    fn member(&mut self, name: &str) {
        if let Some((_, key)) = self.stack.last_mut() {
            *key = Some(name.to_string());
        }
    }
    fn end_struct(&mut self) {
        if let Some((t, _)) = self.stack.pop() {
            self.put(t);
        }
    }
    fn begin_array(&mut self) {
        self.stack.push((Tree::Array(Vec::new()), None));
    }
    fn end_array(&mut self) {
        if let Some((t, _)) = self.stack.pop() {
            self.put(t);
        }
    }
}

/// The columns of one event.
fn event_row(e: &mut EventRef<'_, '_>) -> std::result::Result<Vec<(String, Value)>, ctf::error::DecodeError> {
    let mut row = vec![("ts".to_string(), e.ts().map_or(Value::Null, Value::Int))];
    if let Some(cpu) = e.packet_cpu_id() {
        row.push(("stream_cpu_id".into(), Value::UInt(cpu)));
    }
    for (prefix, scope) in [("sec", EventScope::CommonContext), ("ec", EventScope::SpecificContext), ("", EventScope::Payload)] {
        let plan = e.plan();
        let mut v = TreeVisitor { plan, stack: Vec::new(), root: None };
        if e.visit(scope, &mut v)? {
            if let Some(t) = v.root {
                t.flatten(prefix, &mut row);
            }
        }
    }
    Ok(row)
}

struct Open {
    table: Table,
    file: TableFile,
}

fn flush(o: &mut Open, lost: &mut u64) -> Result<()> {
    o.file.write(&o.table)?;
    *lost += o.table.conflicts;
    o.table = o.table.emptied();
    Ok(())
}

/// Writes every event of `set` into `dir`, one file per event name. A stream that
/// cannot be read on (a decoding error, a field that does not decode) ends there and
/// the others go on; its error is in [`EventsReport::stream_errors`]. An error writing
/// the tables ends the export, and is returned.
pub fn export_events(set: &TraceSet, dir: &Path, format: Format) -> Result<EventsReport> {
    let mut open: HashMap<String, Open> = HashMap::new();
    let mut rep = EventsReport::default();
    let mut merger = Merger::new(set);
    let mut stems = std::collections::HashSet::new();
    let walk = (|| -> Result<()> {
        while let Some(mut m) = merger.next_collecting(&mut rep.stream_errors) {
            let stream = m.stream;
            let Item::Event(e) = &mut m.item else {
                rep.notices += 1;
                continue;
            };
            let row = match event_row(e) {
                Ok(row) => row,
                Err(d) => {
                    // A field that does not decode ends its stream there.
                    let p = *e.packet();
                    let path = set.packet_file(&p).1.path.clone();
                    rep.stream_errors.push(ctf::error::Error::Stream { path, offset: p.info.offset + d.bit_pos / 8, kind: d.kind });
                    merger.retire(stream);
                    continue;
                }
            };
            let name = e.name();
            if !open.contains_key(name) {
                // Distinct names whose file names would clash get `_2`, `_3`, ...
                let mut file_name = name.to_string();
                let mut k = 1;
                while !stems.insert(crate::sink::file_stem(&file_name)) {
                    k += 1;
                    file_name = format!("{name}_{k}");
                }
                let file = TableFile::create(dir, &file_name, format)?;
                open.insert(name.to_string(), Open { table: Table::new(name), file });
            }
            let o = open.get_mut(name).expect("inserted above");
            o.table.push_row(row);
            if o.table.rows() >= BATCH_ROWS {
                flush(o, &mut rep.lost_values)?;
            }
        }
        Ok(())
    })();
    let mut names: Vec<String> = open.keys().cloned().collect();
    names.sort();
    for n in names {
        let Some(mut o) = open.remove(&n) else { continue };
        flush(&mut o, &mut rep.lost_values)?;
        rep.lost_values += o.file.dropped;
        let rows = o.file.rows;
        let path = o.file.finish()?;
        rep.tables.push((n, path, rows));
    }
    walk.map(|_| rep)
}
