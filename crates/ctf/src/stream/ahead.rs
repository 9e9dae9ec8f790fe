//! Reading ahead: a run of fixed-size events of the open packet decoded at once, in
//! one tight loop, and made the current event one by one later
//! ([`StreamCursor::read_ahead`], [`StreamCursor::enter_ahead`]). A reader that merges
//! several streams by time then pays the general path's per-event costs (the cursor's
//! state checks, the item enum, the filter's look-up) once per run instead of once per
//! event.

use std::cell::Cell;

use super::{HeaderCopy, Passed, StreamCursor, Wanted};

/// An event read ahead by [`StreamCursor::read_ahead`], in 40 bytes: its timestamp,
/// clock value, class, header tag, and where it lies in the open packet. (The rest of
/// its header follows: the timestamp field holds the clock value's low bits, and the
/// extended form's id is the class's.)
#[derive(Debug, Clone, Copy)]
pub struct Ahead {
    ts: i64,
    cycles: u64,
    /// Bit position where its first scope starts.
    at: u64,
    /// The header's tag.
    tag: u64,
    class: u32,
    /// `at` less the event's first bit, and [`EXTENDED`] when the header has the
    /// extended form.
    lead: u32,
}

/// [`Ahead::lead`]'s flag of an extended header.
const EXTENDED: u32 = 1 << 31;

impl Ahead {
    /// Its timestamp (ns from the clock's origin).
    #[inline(always)]
    pub fn ts(&self) -> i64 {
        self.ts
    }
}

impl<'t> StreamCursor<'t> {
    /// Reads ahead, from the cursor on, the events [`StreamCursor::next_wanted`] would
    /// yield next, with the same arguments, for as long as each is of fixed size with a
    /// header word loads read (the cases its skimming loop reads) and inside the open
    /// packet, and its clock value lies in `window`: appends them to `out`, at most
    /// `max` in all, and moves past them. Does nothing on a packet of another trace than
    /// `trace`, with notices pending, or on a stream without a clock. The event it
    /// stops before is left for [`StreamCursor::next_wanted`] (with any error it holds).
    ///
    /// Events passed over (not wanted) go to `passed` as there, except that when
    /// events were read ahead, `passed.last` becomes the clock value of the last event
    /// passed over after them (`None`: none was), as a reader's time key stands once it
    /// has taken them all.
    ///
    /// Each event read ahead must be made the current one with
    /// [`StreamCursor::enter_ahead`] before the cursor moves on again: it points into
    /// the open packet.
    pub fn read_ahead(&mut self, wanted: &Wanted, trace: usize, window: (u64, u64), passed: &mut Passed, out: &mut Vec<Ahead>, max: usize) {
        if !self.in_packet || self.done || !self.pending.is_empty() || self.trace as usize != trace {
            return;
        }
        let Some(conv) = self.conv else { return };
        let first = out.len();
        // The last event passed over (since the last one read ahead), and the span of
        // those inside the window.
        let last = Cell::new(None);
        let (mut lo, mut hi) = (u64::MAX, 0);
        self.skim_fixed_taking::<false>(
            &wanted.pass_by_id,
            0,
            |_, c| {
                last.set(Some(c));
                if c >= window.0 && c <= window.1 {
                    (lo, hi) = (lo.min(c), hi.max(c));
                }
            },
            |s| {
                if out.len() >= max || s.cycles < window.0 || s.cycles > window.1 {
                    return false;
                }
                let lead = (s.at - s.start) as u32 | if s.header.ext { EXTENDED } else { 0 };
                out.push(Ahead { ts: conv.to_ns(s.cycles), cycles: s.cycles, at: s.at, tag: s.header.tag, class: s.class, lead });
                last.set(None);
                true
            },
        );
        if out.len() > first {
            // What was passed before them is behind the events read ahead.
            passed.last = None;
        }
        passed.see_run(last.get(), (lo, hi));
    }

    /// Makes event `e`, read ahead by this cursor's last [`StreamCursor::read_ahead`],
    /// the current one, as [`StreamCursor::next_wanted`] would have: its class, clock
    /// value, timestamp, scopes and header (the cursor's position and clock stay
    /// where reading ahead left them).
    #[inline(always)]
    pub fn enter_ahead(&mut self, e: &Ahead) {
        let sp = self.sp;
        let header = HeaderCopy::new(e.tag, e.lead & EXTENDED != 0);
        let starts = sp.fixed.get(e.class as usize).map_or([0; 3], |f| f.starts);
        let start = e.at - u64::from(e.lead & !EXTENDED);
        self.set_current_fixed(header, e.class, (start, e.at), starts, e.cycles, Some(e.ts));
        self.current = None;
    }
}
