//! Whole lines: the [`TextWriter`] keeps what is formatted once (per event class, per
//! packet, per second, per enumeration value) and writes each event's line with it.

use crate::error::DecodeError;
use crate::ir::EnvValue;
use crate::plan::{Node, Plan};
use crate::stream::{EventRef, EventScope, Item};
use crate::trace::TraceSet;

use super::num::{civil_from_days, push_head_and_nanos, push_i64, push_padded, push_seconds, push_u64, put_short, IntStyle};
use super::prog::{compile, Prog, Shape};
use super::visit::TextVisitor;
use super::{EnumCache, Style};

/// How timestamps are shown.
#[derive(Debug, Clone, Copy)]
pub enum TimeFormat {
    /// Time of day `HH:MM:SS.nnnnnnnnn` (with `YYYY-MM-DD ` before it when `date`), in
    /// UTC or, with `utc_offset`, in the time zone it gives (seconds east of UTC for a
    /// time in seconds since the epoch: the local time zone, as Babeltrace's default).
    Wall {
        /// Whether the date is shown.
        date: bool,
        /// The time zone's offset at a time; `None`: UTC.
        utc_offset: Option<fn(i64) -> i64>,
    },
    /// Seconds since the clock's origin, `S.nnnnnnnnn` (`--clock-seconds`).
    Seconds,
}

/// Which parts have their names shown (`--names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    /// `timestamp = `, `delta = `, `name = `, ...
    pub header: bool,
    /// `stream.packet.context = `, `event.fields = `, ...
    pub scope: bool,
    /// Member names of the context scopes.
    pub context: bool,
    /// Member names of the payload.
    pub payload: bool,
}

impl Default for Names {
    fn default() -> Self {
        Names { header: false, scope: false, context: true, payload: true }
    }
}

/// Which header fields are shown (`--fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// The trace's name.
    pub trace: bool,
    /// `hostname` of the environment.
    pub hostname: bool,
    /// `domain` of the environment.
    pub domain: bool,
    /// `procname` of the environment.
    pub procname: bool,
    /// `vpid` of the environment.
    pub vpid: bool,
    /// The event class's log level.
    pub loglevel: bool,
    /// The event class's EMF URI.
    pub emf: bool,
}

impl Default for Fields {
    fn default() -> Self {
        Fields { trace: false, hostname: true, domain: false, procname: true, vpid: true, loglevel: false, emf: false }
    }
}

/// Options of the text view.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions {
    /// How timestamps are shown.
    pub time: TimeFormat,
    /// Whether the time since the previous event is shown (`(+S.nnnnnnnnn)`).
    pub delta: bool,
    /// Names shown.
    pub names: Names,
    /// Header fields shown.
    pub fields: Fields,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions { time: TimeFormat::Wall { date: false, utc_offset: None }, delta: true, names: Names::default(), fields: Fields::default() }
    }
}

/// How one scope of a class is written.
enum ScopeOut {
    Absent,
    Prog(Prog),
    /// Through the interpreter (shapes without a program).
    Visit,
}

/// A packet's offset in its file and its packet context text.
type PacketText = (u64, Vec<u8>);

/// What is formatted once per event class.
struct ClassOut {
    /// From after the timestamp to the first scope (`vm sched_switch: `), or the JSON
    /// name member.
    /// (Followed by 32 bytes of padding, for [`put_short`].)
    head: Vec<u8>,
    head_len: usize,
    scopes: [ScopeOut; 3],
}

/// Writes events as Babeltrace 2's text lines or as canonical JSON lines.
pub struct TextWriter<'s> {
    set: &'s TraceSet,
    style: Style,
    opts: TextOptions,
    /// Per trace, per stream class index, per class index.
    classes: Vec<Vec<Vec<Option<Box<ClassOut>>>>>,
    /// Per trace and stream file, the packet context text of its last packet: its
    /// offset and text (streams interleave: one entry per file).
    packets: Vec<Vec<Option<PacketText>>>,
    /// The last second formatted and its text up to the `.`.
    second: Option<(i64, [u8; 24], u8)>,
    prev_ts: Option<i64>,
    enums: EnumCache,
}

impl<'s> TextWriter<'s> {
    /// A writer of Babeltrace 2's text for `set`.
    pub fn text(set: &'s TraceSet, opts: TextOptions) -> Self {
        Self::new(set, Style::Text, opts)
    }

    /// A writer of the canonical JSON lines (see [`crate::dump`]) for `set`.
    pub fn json(set: &'s TraceSet) -> Self {
        Self::new(set, Style::Json, TextOptions::default())
    }

    fn new(set: &'s TraceSet, style: Style, opts: TextOptions) -> Self {
        let classes = set.traces.iter().map(|t| t.plan.streams.iter().map(|s| (0..s.events.len()).map(|_| None).collect()).collect()).collect();
        let packets = set.traces.iter().map(|t| vec![None; t.files.len()]).collect();
        TextWriter { set, style, opts, classes, packets, second: None, prev_ts: None, enums: EnumCache::default() }
    }

    /// The timestamp of the last event written (the next delta is from it).
    pub fn prev_ts(&self) -> Option<i64> {
        self.prev_ts
    }

    /// Sets the timestamp the next delta is from.
    pub fn set_prev_ts(&mut self, ts: Option<i64>) {
        self.prev_ts = ts;
    }

    /// Appends the line of event `e` (with its `\n`).
    #[inline]
    pub fn write_event(&mut self, out: &mut Vec<u8>, e: &mut EventRef<'_, '_>) -> Result<(), DecodeError> {
        match self.style {
            Style::Text => self.text_line(out, e),
            Style::Json => self.json_line(out, e),
        }
    }

    /// Appends Babeltrace 2's warning line (with its `\n`) for a discarded-events or
    /// lost-packets notice of stream `stream`; false (nothing appended) for an event.
    pub fn write_notice(&mut self, out: &mut Vec<u8>, stream: usize, item: &Item<'_, '_>) -> bool {
        let (n, what) = match item {
            Item::Discarded(n) => (n, "event"),
            Item::LostPackets(n) => (n, "packet"),
            Item::Event(_) => return false,
        };
        let set = self.set;
        let s = &set.streams[stream];
        let first = s.packets.first();
        out.extend_from_slice(format!("WARNING: Tracer discarded {} {what}{} ", n.count, if n.count == 1 { "" } else { "s" }).as_bytes());
        match (n.begin_ns, n.end_ns) {
            (Some(b), Some(e)) => {
                out.extend_from_slice(b"between [");
                self.push_time(out, b);
                out.extend_from_slice(b"] and [");
                self.push_time(out, e);
                out.push(b']');
            }
            _ => out.extend_from_slice(b"(unknown time range)"),
        }
        let t = first.map_or(0, |p| p.trace as usize);
        out.extend_from_slice(format!(" in trace \"{}\" ", trace_name(set, t).unwrap_or_else(|| "(unknown)".into())).as_bytes());
        match set.traces.get(t).and_then(|t| t.class.uuid) {
            Some(u) => {
                let hex: String = u.iter().map(|b| format!("{b:02x}")).collect();
                out.extend_from_slice(format!("(UUID: {}-{}-{}-{}-{}) ", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]).as_bytes());
            }
            None => out.extend_from_slice(b"(no UUID) "),
        }
        let path = first.map(|p| set.packet_file(p).1.path.clone()).unwrap_or_default();
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        out.extend_from_slice(format!("within stream \"{}\" (stream class ID: {}, ", path.display(), s.class_id).as_bytes());
        match s.instance {
            Some(i) => out.extend_from_slice(format!("stream ID: {i}).\n").as_bytes()),
            None => out.extend_from_slice(b"no stream ID).\n"),
        }
        true
    }

    /// Appends `(+S.nnnnnnnnn)`'s inside for timestamp `ts` after the previous one.
    pub fn push_delta(out: &mut Vec<u8>, prev: Option<i64>, ts: i64) {
        match prev {
            Some(p) => {
                out.push(b'+');
                push_seconds(out, ts.wrapping_sub(p) as u64);
            }
            None => out.extend_from_slice(b"+?.?????????"),
        }
    }

    fn text_line(&mut self, out: &mut Vec<u8>, e: &mut EventRef<'_, '_>) -> Result<(), DecodeError> {
        let names = self.opts.names;
        let ts = e.ts();
        if let Some(ts) = ts {
            out.extend_from_slice(if names.header { b"timestamp = " } else { b"[" });
            self.push_time(out, ts);
            if !names.header {
                out.extend_from_slice(b"] ");
            }
            if self.opts.delta {
                out.extend_from_slice(if names.header { b", delta = " } else { b"(" });
                Self::push_delta(out, self.prev_ts, ts);
                if !names.header {
                    out.extend_from_slice(b") ");
                }
            }
            self.prev_ts = Some(ts);
        }
        let (t, s, c) = self.class_ids(e);
        let mut first = true;
        {
            let class = self.classes[t][s][c].as_deref().expect("made by class_ids");
            let head = &class.head[..class.head_len];
            if ts.is_none() && names.header {
                // (The head is made for a line with a timestamp; without one and with
                // header names, the separator before the first header field goes.)
                out.extend_from_slice(head.strip_prefix(b", ").unwrap_or(head));
            } else if head.len() <= 32 {
                put_short(out, &class.head, head.len());
            } else {
                out.extend_from_slice(head);
            }
        }
        self.push_packet_context(out, e, &mut first);
        let scopes = [EventScope::CommonContext, EventScope::SpecificContext, EventScope::Payload];
        const SCOPE_NAMES: [&[u8]; 3] = [b"stream.event.context = ", b"event.context = ", b"event.fields = "];
        let class = self.classes[t][s][c].as_deref().expect("made by class_ids");
        for (i, scope) in scopes.into_iter().enumerate() {
            if matches!(class.scopes[i], ScopeOut::Absent) {
                continue;
            }
            if !first {
                out.extend_from_slice(b", ");
            }
            first = false;
            if names.scope {
                out.extend_from_slice(SCOPE_NAMES[i]);
            }
            let plan = e.plan();
            match &class.scopes[i] {
                ScopeOut::Prog(p) => {
                    if let Some((_, mut cur)) = e.scope_cursor(scope) {
                        p.run(plan, Style::Text, &mut cur, out, &mut self.enums)?;
                    }
                }
                _ => {
                    let member_names = if i == 2 { names.payload } else { names.context };
                    e.visit(scope, &mut TextVisitor::new(out, plan, member_names, &mut self.enums))?;
                }
            }
        }
        out.push(b'\n');
        Ok(())
    }

    fn json_line(&mut self, out: &mut Vec<u8>, e: &mut EventRef<'_, '_>) -> Result<(), DecodeError> {
        out.extend_from_slice(b"{\"ts\":");
        match e.ts_wide() {
            // Beyond 64 bits of nanoseconds: modulo 2^64, as Babeltrace 1 prints it.
            Some(w) if w > i64::MAX as i128 => push_u64(out, w as u64),
            _ => match e.ts() {
                Some(t) => push_i64(out, t),
                None => out.extend_from_slice(b"null"),
            },
        }
        let (t, s, c) = self.class_ids(e);
        let scopes = [EventScope::CommonContext, EventScope::SpecificContext, EventScope::Payload];
        const KEYS: [&[u8]; 3] = [b",\"sec\":", b",\"ec\":", b",\"p\":"];
        let class = self.classes[t][s][c].as_deref().expect("made by class_ids");
        out.extend_from_slice(&class.head[..class.head_len]);
        for (i, scope) in scopes.into_iter().enumerate() {
            match &class.scopes[i] {
                ScopeOut::Absent => {}
                ScopeOut::Prog(p) => {
                    if let Some((_, mut cur)) = e.scope_cursor(scope) {
                        out.extend_from_slice(KEYS[i]);
                        p.run(e.plan(), Style::Json, &mut cur, out, &mut self.enums)?;
                    }
                }
                ScopeOut::Visit => crate::dump::push_json_scope(out, e, scope, KEYS[i])?,
            }
        }
        out.extend_from_slice(b"}\n");
        Ok(())
    }

    /// The indexes of `e`'s class record, made on first use.
    #[inline]
    fn class_ids(&mut self, e: &EventRef<'_, '_>) -> (usize, usize, usize) {
        let (t, s, c) = (e.trace_index(), e.stream_plan().index, e.class_index());
        if self.classes[t][s][c].is_none() {
            let made = Box::new(self.make_class(e));
            self.classes[t][s][c] = Some(made);
        }
        (t, s, c)
    }

    fn make_class(&self, e: &EventRef<'_, '_>) -> ClassOut {
        let plan = e.plan();
        let sp = e.stream_plan();
        let ep = e.class();
        let names = self.opts.names;
        let scope = |root: Option<crate::plan::NodeId>, member_names: bool| -> ScopeOut {
            let Some(root) = root else { return ScopeOut::Absent };
            let shape = Shape { style: self.style, names: member_names };
            match compile(plan, root, shape) {
                // The JSON dump leaves empty scopes out.
                Some(p) if self.style == Style::Json && p.is_empty_struct() => ScopeOut::Absent,
                Some(p) => ScopeOut::Prog(p),
                None => ScopeOut::Visit,
            }
        };
        let scopes = [scope(sp.common_context, names.context), scope(ep.context, names.context), scope(ep.payload, names.payload)];
        let head = match self.style {
            Style::Json => {
                let mut h = b",\"name\":".to_vec();
                crate::dump::json_str(&mut h, ep.name.as_bytes());
                h
            }
            Style::Text => self.text_head(e),
        };
        let head_len = head.len();
        let mut head = head;
        head.extend_from_slice(&[0; 32]);
        ClassOut { head, head_len, scopes }
    }

    /// The header fields and the name, as Babeltrace 2's `print_event_header` writes
    /// them after the timestamp.
    fn text_head(&self, e: &EventRef<'_, '_>) -> Vec<u8> {
        let trace = &self.set.traces[e.trace_index()];
        let tc = &trace.class;
        let ep = e.class();
        let ir_class = tc.streams.iter().find(|s| s.id == e.stream_plan().id).and_then(|s| s.event_classes.iter().find(|c| c.id == ep.id));
        let f = self.opts.fields;
        let names = self.opts.names.header;
        let mut h = Vec::new();
        let mut start_line = !names;
        let mut dom_print = false;
        let text = |k: &str| match tc.env(k) {
            Some(EnvValue::Str(s)) => Some(s.clone()),
            Some(EnvValue::Int(i)) => Some(i.to_string()),
            None => None,
        };
        let mut field = |h: &mut Vec<u8>, name: &str, value: Option<String>, colon: bool| {
            let Some(v) = value else { return };
            if !start_line {
                h.extend_from_slice(b", ");
            }
            if names {
                h.extend_from_slice(name.as_bytes());
                h.extend_from_slice(b" = ");
            } else if colon && dom_print {
                h.push(b':');
            }
            h.extend_from_slice(v.as_bytes());
            dom_print = true;
        };
        if f.trace {
            if let Some(n) = trace_name(self.set, e.trace_index()) {
                if !start_line {
                    h.extend_from_slice(b", ");
                }
                if names {
                    h.extend_from_slice(b"trace = ");
                }
                h.extend_from_slice(n.as_bytes());
            }
        }
        if f.hostname {
            field(&mut h, "trace:hostname", text("hostname"), false);
        }
        if f.domain {
            field(&mut h, "trace:domain", text("domain"), true);
        }
        if f.procname {
            field(&mut h, "trace:procname", text("procname"), true);
        }
        if f.vpid {
            field(&mut h, "trace:vpid", text("vpid").map(|v| format!("({v})")), true);
        }
        if f.loglevel {
            const LEVELS: [&str; 15] = [
                "TRACE_EMERG",
                "TRACE_ALERT",
                "TRACE_CRIT",
                "TRACE_ERR",
                "TRACE_WARNING",
                "TRACE_NOTICE",
                "TRACE_INFO",
                "TRACE_DEBUG_SYSTEM",
                "TRACE_DEBUG_PROGRAM",
                "TRACE_DEBUG_PROCESS",
                "TRACE_DEBUG_MODULE",
                "TRACE_DEBUG_UNIT",
                "TRACE_DEBUG_FUNCTION",
                "TRACE_DEBUG_LINE",
                "TRACE_DEBUG",
            ];
            let level = ir_class.and_then(|c| c.loglevel).and_then(|l| LEVELS.get(usize::try_from(l).ok()?).map(|n| format!("{n} ({l})")));
            field(&mut h, "loglevel", level, true);
        }
        if f.emf {
            field(&mut h, "model.emf.uri", ir_class.and_then(|c| c.emf_uri.clone()), true);
        }
        if dom_print && !names {
            h.push(b' ');
        }
        if !start_line {
            h.extend_from_slice(b", ");
        }
        start_line = true;
        let _ = start_line;
        if names {
            h.extend_from_slice(b"name = ");
        }
        h.extend_from_slice(ep.name.as_bytes());
        h.extend_from_slice(if names { b", " } else { b": " });
        h
    }

    /// Appends `, { cpu_id = 1 }` (the packet context without the fields Babeltrace 2
    /// keeps out of its trace IR), formatted once per packet.
    fn push_packet_context(&mut self, out: &mut Vec<u8>, e: &EventRef<'_, '_>, first: &mut bool) {
        let Some(root) = e.stream_plan().packet_context else { return };
        let p = e.packet();
        let (t, f, offset) = (p.trace as usize, p.file as usize, p.info.offset);
        let Some(slot) = self.packets.get_mut(t).and_then(|v| v.get_mut(f)) else { return };
        if slot.as_ref().is_none_or(|(o, _)| *o != offset) {
            let text = packet_context_text(e, e.plan(), root, self.opts.names, &mut self.enums);
            *slot = Some((offset, text));
        }
        let Some((_, text)) = slot.as_ref() else { return };
        if text.is_empty() {
            return;
        }
        if !*first {
            out.extend_from_slice(b", ");
        }
        *first = false;
        out.extend_from_slice(text);
    }

    /// Appends the timestamp `ts` (ns from origin) in the chosen format.
    #[inline]
    fn push_time(&mut self, out: &mut Vec<u8>, ts: i64) {
        let (date, offset) = match self.opts.time {
            TimeFormat::Wall { date, utc_offset } if ts >= 0 => (date, utc_offset),
            // (Babeltrace 2 too falls back to seconds for times before the origin.)
            _ => {
                if ts < 0 {
                    out.push(b'-');
                }
                push_seconds(out, ts.unsigned_abs());
                return;
            }
        };
        let sec = ts / 1_000_000_000;
        let ns = (ts % 1_000_000_000) as u64;
        let cached = match &self.second {
            Some((s, text, len)) if *s == sec => Some((*text, *len)),
            _ => None,
        };
        let (text, len) = cached.unwrap_or_else(|| {
            let local = sec + offset.map_or(0, |f| f(sec));
            let mut v = Vec::with_capacity(24);
            let days = local.div_euclid(86_400);
            let tod = local.rem_euclid(86_400) as u64;
            if date {
                let (y, m, d) = civil_from_days(days);
                push_padded(&mut v, y.max(0) as u64, 4);
                v.push(b'-');
                push_padded(&mut v, u64::from(m), 2);
                v.push(b'-');
                push_padded(&mut v, u64::from(d), 2);
                v.push(b' ');
            }
            push_padded(&mut v, tod / 3600, 2);
            v.push(b':');
            push_padded(&mut v, tod / 60 % 60, 2);
            v.push(b':');
            push_padded(&mut v, tod % 60, 2);
            v.push(b'.');
            let mut text = [0u8; 24];
            text[..v.len()].copy_from_slice(&v);
            self.second = Some((sec, text, v.len() as u8));
            (text, v.len() as u8)
        });
        push_head_and_nanos(out, &text, len as usize, ns);
    }
}

/// The packet context's text (with its scope name when asked), from the values the
/// packet's decoding left in the slots; empty when Babeltrace 2 shows none (no member
/// left once the clock values and special fields are taken out).
fn packet_context_text(e: &EventRef<'_, '_>, plan: &Plan, root: crate::plan::NodeId, names: Names, enums: &mut EnumCache) -> Vec<u8> {
    let Node::Struct { first, count, .. } = *plan.node(root) else { return Vec::new() };
    let mut t = Vec::new();
    if names.scope {
        t.extend_from_slice(b"stream.packet.context = ");
    }
    t.push(b'{');
    let mut shown = 0;
    for m in &plan.members[first as usize..(first + count) as usize] {
        let h = crate::plan::FieldHandle { node: m.node, packet_level: true, lazy: None };
        let member = |t: &mut Vec<u8>, shown: &mut u32| {
            t.extend_from_slice(if *shown > 0 { b", " } else { b" " });
            *shown += 1;
            if names.context {
                t.extend_from_slice(m.name.as_bytes());
                t.extend_from_slice(b" = ");
            }
        };
        let (bits, signed, base, enum_idx, boolean) = match *plan.node(m.node) {
            Node::Int { role: None, clock: false, bits, signed, base, enum_idx, boolean, .. } => (bits, signed, base, enum_idx, boolean),
            Node::Str { unit: 1, .. } | Node::Array { text: true, .. } | Node::Seq { text: true, .. } => {
                if let Some(b) = e.bytes(h) {
                    member(&mut t, &mut shown);
                    super::push_escaped(&mut t, b);
                }
                continue;
            }
            _ => continue,
        };
        let Some(v) = e.uint(h) else { continue };
        member(&mut t, &mut shown);
        let is = IntStyle::new(bits, signed, base);
        match (boolean, enum_idx) {
            (true, _) => t.extend_from_slice(if v != 0 { b"true" } else { b"false" }),
            (false, Some(en)) => enums.push(plan, Style::Text, en, signed, is, v, &mut t),
            (false, None) => is.push(&mut t, v),
        }
    }
    if shown == 0 && count > 0 {
        return Vec::new();
    }
    t.extend_from_slice(b" }");
    t
}

/// A trace's name as Babeltrace 2 gives it: its `hostname`, then `/` and its directory
/// relative to the directory opened (`vm/ust/uid/0/64-bit`).
pub fn trace_name(set: &TraceSet, t: usize) -> Option<String> {
    let tr = set.traces.get(t)?;
    let host = match tr.class.env("hostname") {
        Some(EnvValue::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let rel = tr.dir.strip_prefix(&set.root).ok().map(|p| p.to_string_lossy().into_owned()).filter(|r| !r.is_empty());
    match (host, rel) {
        (Some(h), Some(r)) => Some(format!("{h}/{r}")),
        (h, None) => h,
        (None, r) => r,
    }
}
