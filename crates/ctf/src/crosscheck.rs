//! The reader's fast paths checked against its general decoder, on any trace (valid or
//! not): the oracle of the fuzz target `fast_paths` (`fuzz/`), also run by the crate's
//! tests on synthesized traces, intact and damaged.
//!
//! The general decoder is [`StreamCursor::next`] on a set whose compiled LTTng headers
//! are turned off ([`TraceSet::without_compiled_headers`]): every event decoded field by field. The fast paths are
//! those of a set as [`crate::trace::TraceSet`] compiles it: headers read by word
//! loads, events passed over by their sizes ([`StreamCursor::next_wanted`] skimming,
//! with packets read in pairs or in turn), events read ahead with their fields copied
//! ([`StreamCursor::read_ahead`], [`StreamCursor::copied`]), and counting
//! ([`StreamCursor::count`], which counts packets two at a time). Each must give the
//! same events, with the same timestamps and field values, and end with the same error
//! (naming the same file and offset), or none.

use crate::plan::{FieldHandle, Node};
use crate::stream::{AheadBuf, CopyRequest, Item, Passed, StreamCursor, Wanted, MAX_COPIES};
use crate::trace::TraceSet;

/// What a reader took from one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// An event: class index, clock value, timestamp and its canonical JSON line.
    Event(usize, u64, Option<i64>, String),
    /// A notice: lost packets (`true`) or discarded events, count, end of interval.
    Notice(bool, u64, Option<i64>),
}

/// One reading of a stream: the items taken, then the error it ended with, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// The items, in order.
    pub items: Vec<Seen>,
    /// The error (as displayed: cause, file and offset), if the reading ended on one.
    pub error: Option<String>,
}

fn seen(item: &mut Item<'_, '_>) -> Seen {
    match item {
        Item::Event(e) => {
            let (class, cycles, ts) = (e.class_index(), e.cycles(), e.ts());
            let mut json = Vec::new();
            let json = match crate::dump::write_json(&mut json, item) {
                Ok(()) => String::from_utf8_lossy(&json).into_owned(),
                Err(e) => format!("field error: {e:?}"),
            };
            Seen::Event(class, cycles, ts, json)
        }
        Item::Discarded(n) => Seen::Notice(false, n.count, n.end_ns),
        Item::LostPackets(n) => Seen::Notice(true, n.count, n.end_ns),
    }
}

fn wanted_of(mask: u64, class: usize) -> bool {
    mask >> (class % 64) & 1 == 1
}

/// Keeps what a reader's step gave in `r` (an event of a class in `mask`, a notice, or
/// the error that ends the stream); true when the stream has ended.
fn record(r: &mut Reading, mask: u64, next: crate::error::Result<Option<Item<'_, '_>>>) -> bool {
    match next {
        Ok(None) => true,
        Ok(Some(mut item)) => {
            if !matches!(&item, Item::Event(e) if !wanted_of(mask, e.class_index())) {
                r.items.push(seen(&mut item));
            }
            false
        }
        Err(e) => {
            r.error = Some(e.to_string());
            true
        }
    }
}

/// Stream `s` read by the general path ([`StreamCursor::next`]; on a set from
/// [`TraceSet::without_compiled_headers`], the general decoder), keeping the events of the classes whose bit
/// (class index mod 64) is set in `mask`, and every notice.
pub fn read_general(set: &TraceSet, s: usize, mask: u64) -> Reading {
    let mut c = StreamCursor::new(set, s);
    let mut r = Reading::default();
    loop {
        if record(&mut r, mask, c.next()) {
            return r;
        }
    }
}

/// The integer and array fields at the top of each class's payload, at most
/// [`MAX_COPIES`] a class, as copy requests (label: the class index).
fn copy_requests(set: &TraceSet, s: usize) -> Vec<Option<CopyRequest>> {
    let plan = &set.traces[0].plan;
    let Some(sp) = plan.stream(set.streams[s].class_id) else { return Vec::new() };
    sp.events
        .iter()
        .enumerate()
        .map(|(i, ev)| {
            let root = ev.payload?;
            let Node::Struct { first, count, .. } = plan.node(root) else { return None };
            let fields = plan.struct_members(*first, *count).iter().filter_map(|m| plan.event_field(sp, ev, &[&m.name])).take(MAX_COPIES).map(Some).collect();
            Some(CopyRequest { label: i as u32, fields })
        })
        .collect()
}

/// An event's copied values as the event itself gives them.
fn fields_of(ev: &crate::stream::EventRef<'_, '_>, fields: &[Option<FieldHandle>]) -> Vec<(u64, Option<Vec<u8>>)> {
    let mut v: Vec<_> =
        fields.iter().map(|h| (h.and_then(|h| ev.uint(h)).unwrap_or(u64::MAX), h.and_then(|h| ev.array_bytes(h)).map(<[u8]>::to_vec))).collect();
    v.resize(MAX_COPIES + 1, (u64::MAX, None));
    v
}

/// Stream `s` of `set` read by the fast paths, keeping the classes of `mask` (as
/// [`read_general`]), turning at each step to the way `turns` gives, in turn (cycling):
/// 0 skims ([`StreamCursor::next_wanted`] passing over events by their sizes, two
/// packets side by side when `pairs`), 1 decodes every event
/// ([`StreamCursor::next_wanted`] without skimming), 2 reads up to 4 events ahead
/// ([`StreamCursor::read_ahead`], each then entered), 3 takes the next item
/// ([`StreamCursor::next`]). `Err`: a copied field differs from the event's own value.
pub fn read_fast(set: &TraceSet, s: usize, mask: u64, turns: &[u8], pairs: bool) -> Result<Reading, String> {
    let Some(sp) = set.traces[0].plan.stream(set.streams[s].class_id) else { return Ok(read_general(set, s, mask)) };
    let classes = (0..sp.events.len()).map(|i| wanted_of(mask, i)).collect();
    let requests = copy_requests(set, s);
    let wanted = Wanted::with_copies(sp, classes, &requests);
    let mut c = StreamCursor::new(set, s);
    c.read_in_pairs(pairs);
    let mut r = Reading::default();
    let mut passed = Passed::default();
    for step in 0usize.. {
        let turn = if turns.is_empty() { 0 } else { turns[step % turns.len()] % 4 };
        if turn == 2 {
            let mut ahead = AheadBuf::new();
            c.read_ahead(&wanted, 0, (0, u64::MAX), &mut passed, &mut ahead, 4);
            if !ahead.is_empty() {
                for e in ahead.iter() {
                    let copied =
                        c.copied(e, &wanted).map(|v| (v.label(), (0..MAX_COPIES + 1).map(|i| (v.get(i), v.bytes(i).map(<[u8]>::to_vec))).collect::<Vec<_>>()));
                    let ts = e.ts();
                    c.enter_ahead(e);
                    let mut item = c.current();
                    let Item::Event(ev) = &item else { return Err("an event read ahead is not an event".into()) };
                    if let Some((label, got)) = copied {
                        let req = requests.get(label as usize).and_then(Option::as_ref).ok_or("copies of a class without a request")?;
                        let want = fields_of(ev, &req.fields);
                        if got != want {
                            return Err(format!("copied fields of {} at bit {}: {got:?}, the event gives {want:?}", ev.name(), ev.bit_offset()));
                        }
                    }
                    if ev.ts() != Some(ts) {
                        return Err(format!("timestamp read ahead {ts}, the event gives {:?}", ev.ts()));
                    }
                    r.items.push(seen(&mut item));
                }
                continue;
            }
        }
        let next = match turn {
            3 => c.next(),
            _ => c.next_wanted(&wanted, 0, (0, u64::MAX), turn != 1, &mut passed),
        };
        if record(&mut r, mask, next) {
            return Ok(r);
        }
    }
    unreachable!("the loop returns")
}

/// Stream `s` counted per class by [`StreamCursor::count`]: the counts and notices
/// (discarded, lost), or the error, as displayed.
pub fn count_fast(set: &TraceSet, s: usize) -> (Vec<u64>, Result<(u64, u64), String>) {
    let n = set.traces[0].plan.stream(set.streams[s].class_id).map_or(0, |sp| sp.events.len());
    let mut per = vec![0; n];
    let r = StreamCursor::new(set, s).count(&mut per).map_err(|e| e.to_string());
    (per, r)
}

/// [`count_fast`]'s answer as the general reading of every class (`mask` all ones)
/// gives it: an error, when there is one, and only then, is the same error, and the
/// counts are those of the events before it.
fn count_agrees(all: &Reading, counted: &(Vec<u64>, Result<(u64, u64), String>)) -> Result<(), String> {
    let mut per = vec![0u64; counted.0.len()];
    let (mut discarded, mut lost) = (0, 0);
    for item in &all.items {
        match item {
            Seen::Event(class, ..) => {
                if let Some(n) = per.get_mut(*class) {
                    *n += 1;
                }
            }
            Seen::Notice(true, n, _) => lost += n,
            Seen::Notice(false, n, _) => discarded += n,
        }
    }
    match (&all.error, &counted.1) {
        (None, Ok(notices)) if per == counted.0 && *notices == (discarded, lost) => Ok(()),
        (Some(a), Err(b)) if a == b && per == counted.0 => Ok(()),
        _ => Err(format!("count: {:?} {:?}; the general decoder: {per:?} {:?} {:?}", counted.0, counted.1, (discarded, lost), all.error)),
    }
}

/// Checks every fast path on every stream of `fast` against the general decoder on
/// `slow` (the same trace, [`TraceSet::without_compiled_headers`]), keeping the classes of `mask` and
/// turning between ways of reading as `turns` says (see [`read_fast`]): `Err` describes
/// the first difference.
pub fn fast_paths_agree(fast: &TraceSet, slow: &TraceSet, mask: u64, turns: &[u8]) -> Result<(), String> {
    if fast.streams.len() != slow.streams.len() {
        return Err(format!("{} streams, the general set {}", fast.streams.len(), slow.streams.len()));
    }
    for s in 0..fast.streams.len() {
        let want = read_general(slow, s, mask);
        let all = if mask == u64::MAX { want.clone() } else { read_general(slow, s, u64::MAX) };
        let skimming = [0u8];
        for (turns, pairs) in [(&skimming[..], true), (&skimming[..], false), (&[1u8][..], false), (&[2u8][..], true), (turns, true)] {
            let got = read_fast(fast, s, mask, turns, pairs).map_err(|e| format!("stream {s}, turns {turns:?}: {e}"))?;
            if got != want {
                return Err(describe(s, &format!("turns {turns:?}, pairs {pairs}"), &got, &want));
            }
        }
        // The word-load path of `next`, every class.
        let got = read_general(fast, s, u64::MAX);
        if got != all {
            return Err(describe(s, "next", &got, &all));
        }
        count_agrees(&all, &count_fast(fast, s)).map_err(|e| format!("stream {s}: {e}"))?;
    }
    Ok(())
}

/// The check the fuzz target `fast_paths` makes of one input: [`fast_paths_agree`] on a
/// trace of one data stream file, `channel0_0`, held in memory. Byte 0 of `data`
/// chooses the metadata (bit 0 clear: `compact`, set: `large`) and how many bytes
/// after the mask are turns (bits 1..5); bytes 1..9 are the mask of wanted classes
/// (little-endian); then come the turns (see [`read_fast`]), then the stream file's
/// bytes. An input shorter than 9 bytes checks nothing. `Err`: the first difference,
/// or the metadata's error.
pub fn fuzz_input_agrees(data: &[u8], compact: &[u8], large: &[u8]) -> Result<(), String> {
    if data.len() < 9 {
        return Ok(());
    }
    let metadata = if data[0] & 1 == 0 { compact } else { large };
    let n_turns = usize::from((data[0] >> 1) & 31);
    let mask = u64::from_le_bytes(data[1..9].try_into().expect("8 bytes"));
    let rest = &data[9..];
    let (turns, stream) = rest.split_at(n_turns.min(rest.len()));
    let set = || -> Result<TraceSet, String> {
        let dir = std::path::Path::new("fuzz");
        let mut set = TraceSet::in_memory(dir);
        set.add_memory_trace(dir, metadata).map_err(|e| format!("the metadata: {e}"))?;
        set.set_memory_files(0, vec![(std::path::PathBuf::from("channel0_0"), stream.to_vec())]);
        Ok(set)
    };
    fast_paths_agree(&set()?, &set()?.without_compiled_headers(), mask, turns)
}

/// Where two readings part.
fn describe(s: usize, how: &str, got: &Reading, want: &Reading) -> String {
    let at = got.items.iter().zip(&want.items).position(|(a, b)| a != b).unwrap_or(got.items.len().min(want.items.len()));
    format!(
        "stream {s} ({how}): item {at} of {}/{}: {:?}, the general decoder {:?}; errors {:?}, the general decoder {:?}",
        got.items.len(),
        want.items.len(),
        got.items.get(at),
        want.items.get(at),
        got.error,
        want.error
    )
}
