//! Granularity degree k and change suppression for [`HistoryStore::update`].
//!
//! A key fed through `update` is a step function known by its change points.
//! The store keeps one step per k changes: at every k-th change the held value
//! jumps to the current true value, and the interval that ends there becomes a
//! record. Updates that repeat the current value are not changes. The store's
//! answer is therefore exact at every recorded change point and lags by at most
//! k - 1 changes in between (k = 1 is exact everywhere).

use crate::error::{Error, Result};
use crate::types::{Key, Record, Timestamp, Value, ValueKind};
use crate::writer::HistoryStore;

/// Sampling state of one key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sampler {
    /// Start of the held value's interval.
    since: u64,
    /// Held value (what the store answers from `since` on).
    bits: u64,
    /// Time and value of the latest update.
    latest_t: u64,
    latest_bits: u64,
    /// Changes since the last step.
    changes: u32,
    /// Whether the held value is already stored up to `since` (after a close);
    /// the next step then needs no record, a gap holds the value.
    recorded: bool,
}

/// A record to emit: `[start, end)` holding `bits`.
type Emit = (u64, u64, u64);

impl Sampler {
    fn start(t: u64, bits: u64) -> Self {
        Sampler { since: t, bits, latest_t: t, latest_bits: bits, changes: 0, recorded: false }
    }

    fn change(&mut self, t: u64, bits: u64, k: u32) -> Option<Emit> {
        if bits == self.latest_bits {
            return None;
        }
        self.latest_t = t;
        self.latest_bits = bits;
        if t == self.since {
            // Several changes at one instant: only the last one is visible.
            self.bits = bits;
            self.recorded = false;
            return None;
        }
        self.changes += 1;
        if self.changes < k {
            return None;
        }
        let emit = (!self.recorded).then_some((self.since, t, self.bits));
        *self = Sampler::start(t, bits);
        emit
    }

    fn close(&mut self, end: u64) -> [Option<Emit>; 2] {
        let mut out = [None, None];
        if self.changes > 0 {
            out[0] = (!self.recorded).then_some((self.since, self.latest_t, self.bits));
            *self = Sampler::start(self.latest_t, self.latest_bits);
        }
        if !self.recorded {
            let end = end.max(self.since);
            out[1] = Some((self.since, end, self.bits));
            self.since = end;
            self.latest_t = end;
            self.recorded = true;
        }
        out
    }
}

impl HistoryStore {
    /// Tells the store that `key` has value `value` from time `t` on. Repeated
    /// values are ignored; one record is written per `granularity` changes
    /// (see [`Config::granularity`](crate::Config::granularity)). The interval
    /// still open is only in memory: call [`close_intervals`](Self::close_intervals)
    /// before the final commit to store it.
    pub fn update(&mut self, key: Key, t: Timestamp, value: Value) -> Result<()> {
        let k = self.config().granularity;
        let bits = value.to_bits();
        let state = self.key_state(key, value.kind())?;
        let emit = match &mut state.sampler {
            None => {
                if t.0 < state.last_end {
                    return Err(Error::OutOfOrder { key, start: t, end: t, prev_end: Timestamp(state.last_end) });
                }
                state.sampler = Some(Box::new(Sampler::start(t.0, bits)));
                None
            }
            Some(s) => {
                if t.0 < s.latest_t {
                    return Err(Error::OutOfOrder { key, start: t, end: t, prev_end: Timestamp(s.latest_t) });
                }
                s.change(t.0, bits, k)
            }
        };
        let kind = value.kind();
        self.emit(key, kind, emit)
    }

    fn emit(&mut self, key: Key, kind: ValueKind, emit: Option<Emit>) -> Result<()> {
        match emit {
            Some((start, end, bits)) => self.append(Record { key, value: Value::from_bits(kind, bits), start: Timestamp(start), end: Timestamp(end) }),
            None => Ok(()),
        }
    }

    /// Stores the interval still open for every key fed through `update`,
    /// ending it at `end` (or at its own start if later); call it before the
    /// final commit so that the latest values survive.
    pub fn close_intervals(&mut self, end: Timestamp) -> Result<()> {
        let mut todo: Vec<(Key, ValueKind, [Option<Emit>; 2])> = Vec::new();
        for (&key, state) in self.keys_mut() {
            if let Some(s) = &mut state.sampler {
                todo.push((key, state.kind, s.close(end.0)));
            }
        }
        todo.sort_unstable_by_key(|t| t.0);
        for (key, kind, emits) in todo {
            for e in emits {
                self.emit(key, kind, e)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k1_records_every_change_and_skips_repeats() {
        let mut s = Sampler::start(0, 5);
        assert_eq!(s.change(10, 5, 1), None, "same value: no record");
        assert_eq!(s.change(20, 7, 1), Some((0, 20, 5)));
        assert_eq!(s.change(30, 9, 1), Some((20, 30, 7)));
        assert_eq!(s.close(40), [None, Some((30, 40, 9))]);
        assert_eq!(s.close(50), [None, None], "closing twice stores nothing new");
        assert_eq!(s.change(60, 10, 1), None, "after a close, the gap holds the value");
        assert_eq!(s.change(70, 11, 1), Some((60, 70, 10)));
    }

    #[test]
    fn k3_keeps_one_step_per_three_changes() {
        let mut s = Sampler::start(0, 0);
        let emitted: Vec<_> = (1..=7u64).filter_map(|i| s.change(i * 10, i, 3)).collect();
        assert_eq!(emitted, vec![(0, 30, 0), (30, 60, 3)]);
        assert_eq!(s.close(100), [Some((60, 70, 6)), Some((70, 100, 7))]);
    }
}
