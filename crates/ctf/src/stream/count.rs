//! Counting events per class without yielding them: the rest of a stream, one packet,
//! or the part of a packet inside a window of clock values.

use crate::error::{DecodeError, Result};

use super::{CountError, Mode, PacketCount, Step, StreamCursor};

impl<'t> StreamCursor<'t> {
    /// Counts the remaining events per event class (`per_class[class_index] += 1`) and
    /// returns the discarded events and lost packets noticed, decoding exactly what
    /// [`StreamCursor::next`] decodes (every bound checked) without yielding items.
    /// Whole packets are counted two at a time where they can be
    /// ([`StreamCursor::count_pair`]).
    pub fn count(&mut self, per_class: &mut [u64]) -> Result<(u64, u64)> {
        self.leave_replay();
        let (mut discarded, mut lost) = (0, 0);
        // Reads the second packet of each pair ([`StreamCursor::count_pair`]).
        let mut twin = None;
        loop {
            while let Some((is_lost, n)) = self.pending.pop() {
                if is_lost {
                    lost += n.count
                } else {
                    discarded += n.count
                }
            }
            if self.mode.in_packet() {
                self.skim_rest(per_class).map_err(|e| self.stream_error(e))?;
                self.mode = Mode::Between;
            }
            if self.mode != Mode::Done && self.next_packet + 1 < self.last_packet {
                let twin = twin.get_or_insert_with(|| self.twin());
                if let Some((first, second)) = self.count_pair(twin, per_class, (0, u64::MAX))? {
                    let second = second?;
                    discarded += first.discarded + second.discarded;
                    lost += first.lost + second.lost;
                    continue;
                }
            }
            match self.advance() {
                Ok(None) => return Ok((discarded, lost)),
                Ok(Some(Step::Notice((is_lost, n)))) => {
                    if is_lost {
                        lost += n.count
                    } else {
                        discarded += n.count
                    }
                }
                Ok(Some(Step::Event)) => {
                    tally(per_class, self.ev.class);
                }
                Err(e) => {
                    self.mode = Mode::Done;
                    return Err(e);
                }
            }
        }
    }

    /// Decodes the rest of the current packet, or the next packet when between packets,
    /// counting its events per event class; returns what it counted, or `None` at the
    /// end of the range. Notices of that packet are counted, not yielded. On an error,
    /// `per_class` holds the packet's events before it, and the error what was counted
    /// of the packet ([`CountError::before`]).
    pub fn count_packet(&mut self, per_class: &mut [u64]) -> std::result::Result<Option<PacketCount>, CountError> {
        self.count_packet_in(per_class, (0, u64::MAX))
    }

    /// [`StreamCursor::count_packet`], counting only the events whose clock value lies
    /// in `window` (inclusive; all are decoded); `first_cycles` and `last_cycles` are
    /// those of the counted events.
    pub fn count_packet_in(&mut self, per_class: &mut [u64], window: (u64, u64)) -> std::result::Result<Option<PacketCount>, CountError> {
        self.leave_replay();
        if !self.mode.in_packet() {
            if self.mode == Mode::Done || self.next_packet >= self.last_packet {
                // Let `advance` report the stream's error (if any) and finish.
                return match self.advance() {
                    Ok(_) => Ok(None),
                    Err(e) => {
                        self.mode = Mode::Done;
                        Err(e.into())
                    }
                };
            }
            let p = self.stream.packets[self.next_packet];
            self.next_packet += 1;
            if let Err(e) = self.open_packet(p) {
                self.mode = Mode::Done;
                return Err(e.into());
            }
        }
        if counted_whole(&self.packet.expect("a packet is open").info, window) {
            // Every event counts (the packet's events lie within its context's time
            // range, as the packet index assumes): the tight loop, first and last clock
            // values read around it.
            let out = self.begin_count(per_class)?;
            return self.end_count(out, per_class).map(Some);
        }
        let mut out = self.count_of_open_packet();
        let seen = self.skim_each(|class, cycles| {
            if cycles >= window.0 && cycles <= window.1 {
                tally(per_class, class);
                out.events += 1;
                out.first_cycles.get_or_insert(cycles);
                out.last_cycles = Some(cycles);
            }
        });
        seen.map_err(|e| self.fail_counting(e, out))?;
        self.mode = Mode::Between;
        Ok(Some(out))
    }

    /// Passes over the rest of the open packet, counting its events per class; returns
    /// how many there were.
    #[inline(always)]
    pub(super) fn skim_rest(&mut self, per_class: &mut [u64]) -> std::result::Result<u64, DecodeError> {
        let mut n = 0;
        self.skim_each(|class, _| {
            tally(per_class, class);
            n += 1;
        })?;
        Ok(n)
    }

    /// Passes over the rest of the open packet, calling `see(class, clock)` for each
    /// event: runs of fixed-size events through [`StreamCursor::skim_fixed`], the others
    /// one by one through the general path.
    #[inline(always)]
    pub(super) fn skim_each(&mut self, mut see: impl FnMut(u32, u64)) -> std::result::Result<(), DecodeError> {
        while self.cur.pos < self.cur.end {
            let sp = self.sp;
            self.skim_fixed::<false>(&sp.skim_by_id, 0, &mut see);
            if self.cur.pos >= self.cur.end {
                break;
            }
            let class = self.skim_event()?;
            see(class, self.dec.clock);
        }
        Ok(())
    }
}

/// Whether a packet of index entry `info` is counted whole in `window` (clock values):
/// `window` is everything, or the packet's index times lie inside it (its events lie
/// within its context's time range, as the packet index assumes).
pub(super) fn counted_whole(info: &crate::index::PacketInfo, window: (u64, u64)) -> bool {
    match (info.ts_begin, info.ts_end) {
        _ if window == (0, u64::MAX) => true,
        (Some(b), Some(e)) => b >= window.0 && e <= window.1,
        _ => false,
    }
}

/// Counts one event of class index `class` (classes beyond `per_class` are not counted).
#[inline(always)]
pub(super) fn tally(per_class: &mut [u64], class: u32) {
    if let Some(c) = per_class.get_mut(class as usize) {
        *c += 1;
    }
}
