//! The wire form of [`Rec`] records: a compact binary encoding, so that chunk logs
//! computed in one process (a cluster's executor) can be applied in another (the
//! client of a fleet cube build).
//!
//! A log's bytes start with [`VERSION`]; each record is a tag byte then its fields,
//! integers as LEB128 varints (signed ones zigzag-encoded), so that small tids, fds,
//! stream indices and return values take a byte or two. The encoding of a path or
//! name is the caller's (`P` may be an owned string or an index into the caller's own
//! bytes). Decoding checks everything it reads and answers a [`WireError`] naming the
//! offset and the cause, never a panic: the bytes come from another process.

use super::{BlockEvent, BlockRec, IrqEvent, Rec, Who};
use crate::layout::Sc;

/// The version byte of this encoding (the first byte of an encoded log).
pub const VERSION: u8 = 2;

/// Bytes that could not be decoded: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// Offset of the byte where decoding failed.
    pub offset: usize,
    /// What was wrong there.
    pub cause: String,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "offset {}: {}", self.offset, self.cause)
    }
}

impl std::error::Error for WireError {}

/// Appends `v` as a LEB128 varint.
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded (small magnitudes, either sign, take few bytes).
#[inline]
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends `v` as 0 (None) or 1 then `v`.
fn put_opt_i64(out: &mut Vec<u8>, v: Option<i64>) {
    match v {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            put_i64(out, v);
        }
    }
}

/// Appends a length then the bytes.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A cursor over encoded bytes; every read checks its bounds and ranges.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// The offset of the next byte.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Whether every byte was read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// An error at the current offset.
    pub fn error(&self, cause: impl Into<String>) -> WireError {
        WireError { offset: self.pos, cause: cause.into() }
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, WireError> {
        let b = *self.buf.get(self.pos).ok_or_else(|| self.error("the bytes end inside a record"))?;
        self.pos += 1;
        Ok(b)
    }

    /// A LEB128 varint.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                break;
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(WireError { offset: start, cause: "a varint longer than 64 bits".into() })
    }

    /// A zigzag varint.
    pub fn i64(&mut self) -> Result<i64, WireError> {
        let u = self.u64()?;
        Ok((u >> 1) as i64 ^ -((u & 1) as i64))
    }

    /// A varint that must fit a `u32`.
    pub fn u32(&mut self) -> Result<u32, WireError> {
        let at = self.pos;
        let v = self.u64()?;
        u32::try_from(v).map_err(|_| WireError { offset: at, cause: format!("{v} does not fit 32 bits") })
    }

    /// A zigzag varint that must fit an `i32`.
    pub fn i32(&mut self) -> Result<i32, WireError> {
        let at = self.pos;
        let v = self.i64()?;
        i32::try_from(v).map_err(|_| WireError { offset: at, cause: format!("{v} does not fit 32 bits") })
    }

    /// A flag byte: 0 or 1.
    pub fn flag(&mut self) -> Result<bool, WireError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(WireError { offset: self.pos - 1, cause: format!("flag byte {b} (0 or 1 expected)") }),
        }
    }

    fn opt_i64(&mut self) -> Result<Option<i64>, WireError> {
        Ok(if self.flag()? { Some(self.i64()?) } else { None })
    }

    fn opt_i32(&mut self) -> Result<Option<i32>, WireError> {
        Ok(if self.flag()? { Some(self.i32()?) } else { None })
    }

    /// A length (checked against the bytes left) then that many bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8], WireError> {
        let at = self.pos;
        let n = self.u64()?;
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(WireError { offset: at, cause: format!("a length of {n} bytes where {left} are left") });
        }
        let b = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(b)
    }

    /// A count of items of at least `min_bytes` bytes each, checked against the bytes
    /// left (so that a damaged count cannot make the caller reserve a huge buffer).
    pub fn count(&mut self, min_bytes: usize) -> Result<usize, WireError> {
        let at = self.pos;
        let n = self.u64()?;
        let left = (self.buf.len() - self.pos) as u64;
        if n.saturating_mul(min_bytes.max(1) as u64) > left {
            return Err(WireError { offset: at, cause: format!("a count of {n} items where {left} bytes are left") });
        }
        Ok(n as usize)
    }

    /// The version byte, which must be `expected`.
    pub fn version(&mut self, expected: u8, what: &str) -> Result<(), WireError> {
        match self.u8()? {
            v if v == expected => Ok(()),
            v => Err(WireError { offset: self.pos - 1, cause: format!("{what} of version {v}, this build reads version {expected}") }),
        }
    }

    fn who(&mut self) -> Result<Who, WireError> {
        let at = self.pos;
        Ok(match self.u8()? {
            0 => Who::Tid(self.i32()?),
            1 => Who::Head(self.u32()?),
            2 => Who::Stream(self.u32()?),
            k => return Err(WireError { offset: at, cause: format!("issuer kind {k}") }),
        })
    }

    fn sc(&mut self) -> Result<Sc, WireError> {
        let at = self.pos;
        let i = self.u8()?;
        Sc::from_index(u32::from(i)).ok_or_else(|| WireError { offset: at, cause: format!("syscall index {i}") })
    }

    fn opt_sc(&mut self) -> Result<Option<Sc>, WireError> {
        Ok(if self.flag()? { Some(self.sc()?) } else { None })
    }

    /// One record; `path` reads a path or name as the encoder's `path` wrote it.
    pub fn rec<P>(&mut self, mut path: impl FnMut(&mut Reader<'a>) -> Result<P, WireError>) -> Result<Rec<P>, WireError> {
        let at = self.pos;
        Ok(match self.u8()? {
            0 => {
                let (who, sc, a0, a1, a2) = (self.who()?, self.sc()?, self.i32()?, self.i32()?, self.i32()?);
                let path = if self.flag()? { Some(path(self)?) } else { None };
                Rec::Entry { who, sc, a0, a1, a2, path }
            }
            1 => Rec::OtherEntry { who: self.who()? },
            2 => Rec::Exit { who: self.who()?, sc: self.opt_sc()?, ret: self.i64()? },
            3 => Rec::Pair { who: self.who()?, sc: self.opt_sc()?, fds: [self.i32()?, self.i32()?] },
            4 => Rec::Fork { parent_tid: self.opt_i32()?, parent_pid: self.opt_i32()?, child_tid: self.i32()?, child_pid: self.opt_i32()? },
            5 => Rec::Exec { who: self.who()? },
            6 => Rec::ProcState { tid: self.i32()?, pid: self.i32()? },
            7 => Rec::FdDump { pid: self.i32()?, fd: self.i32()?, path: path(self)?, cloexec: self.flag()? },
            8 => Rec::Name { tid: self.i32()?, name: path(self)? },
            9 => Rec::Switch { s: self.u32()?, cpu: self.u32()?, prev: self.i32()?, next: self.i32()?, prio: self.i32()? },
            10 => Rec::Call { who: self.who()?, call: self.u32()? },
            11 => Rec::Wakeup { s: self.u32()?, tid: self.i32()? },
            12 => {
                let (s, w) = (self.u32()?, self.pos);
                let what = match self.u8()? {
                    0 => IrqEvent::HardEntry,
                    1 => IrqEvent::HardExit,
                    2 => IrqEvent::SoftRaise,
                    3 => IrqEvent::SoftEntry,
                    4 => IrqEvent::SoftExit,
                    k => return Err(WireError { offset: w, cause: format!("interrupt event kind {k}") }),
                };
                let id = self.u32()?;
                let name = if self.flag()? { Some(path(self)?) } else { None };
                Rec::Irq { s, what, id, name }
            }
            13 => {
                let (s, cpu, w) = (self.u32()?, self.u32()?, self.pos);
                let what = match self.u8()? {
                    0 => BlockEvent::Insert,
                    1 => BlockEvent::Issue,
                    2 => BlockEvent::Complete,
                    k => return Err(WireError { offset: w, cause: format!("block event kind {k}") }),
                };
                let (dev, sector, nr, tid, write) = (self.u64()?, self.u64()?, self.u64()?, self.opt_i32()?, self.flag()?);
                Rec::Block(Box::new(BlockRec { s, cpu, what, dev, sector, nr, tid, write }))
            }
            14 => Rec::BlockDevice { dev: self.u64()?, name: path(self)? },
            15 => Rec::Frame { prev: self.opt_i64()?, block: self.u32()? },
            t => return Err(WireError { offset: at, cause: format!("record tag {t}") }),
        })
    }
}

fn put_who(out: &mut Vec<u8>, w: Who) {
    match w {
        Who::Tid(t) => {
            out.push(0);
            put_i64(out, t.into());
        }
        Who::Head(s) => {
            out.push(1);
            put_u64(out, s.into());
        }
        Who::Stream(s) => {
            out.push(2);
            put_u64(out, s.into());
        }
    }
}

fn put_opt_sc(out: &mut Vec<u8>, sc: Option<Sc>) {
    match sc {
        None => out.push(0),
        Some(sc) => out.extend([1, sc as u8]),
    }
}

/// Appends record `r`; `path` appends a path or name (as the decoder's `path` reads it).
pub fn put_rec<P>(out: &mut Vec<u8>, r: &Rec<P>, mut path: impl FnMut(&mut Vec<u8>, &P)) {
    let i = |out: &mut Vec<u8>, v: i32| put_i64(out, v.into());
    let u = |out: &mut Vec<u8>, v: u32| put_u64(out, v.into());
    let opt_i = |out: &mut Vec<u8>, v: Option<i32>| put_opt_i64(out, v.map(i64::from));
    match r {
        Rec::Entry { who, sc, a0, a1, a2, path: p } => {
            out.push(0);
            put_who(out, *who);
            out.push(*sc as u8);
            for a in [a0, a1, a2] {
                i(out, *a);
            }
            out.push(p.is_some().into());
            if let Some(p) = p {
                path(out, p);
            }
        }
        Rec::OtherEntry { who } => {
            out.push(1);
            put_who(out, *who);
        }
        Rec::Exit { who, sc, ret } => {
            out.push(2);
            put_who(out, *who);
            put_opt_sc(out, *sc);
            put_i64(out, *ret);
        }
        Rec::Pair { who, sc, fds } => {
            out.push(3);
            put_who(out, *who);
            put_opt_sc(out, *sc);
            i(out, fds[0]);
            i(out, fds[1]);
        }
        Rec::Fork { parent_tid, parent_pid, child_tid, child_pid } => {
            out.push(4);
            opt_i(out, *parent_tid);
            opt_i(out, *parent_pid);
            i(out, *child_tid);
            opt_i(out, *child_pid);
        }
        Rec::Exec { who } => {
            out.push(5);
            put_who(out, *who);
        }
        Rec::ProcState { tid, pid } => {
            out.push(6);
            i(out, *tid);
            i(out, *pid);
        }
        Rec::FdDump { pid, fd, path: p, cloexec } => {
            out.push(7);
            i(out, *pid);
            i(out, *fd);
            path(out, p);
            out.push((*cloexec).into());
        }
        Rec::Name { tid, name } => {
            out.push(8);
            i(out, *tid);
            path(out, name);
        }
        Rec::Switch { s, cpu, prev, next, prio } => {
            out.push(9);
            u(out, *s);
            u(out, *cpu);
            i(out, *prev);
            i(out, *next);
            i(out, *prio);
        }
        Rec::Call { who, call } => {
            out.push(10);
            put_who(out, *who);
            u(out, *call);
        }
        Rec::Wakeup { s, tid } => {
            out.push(11);
            u(out, *s);
            i(out, *tid);
        }
        Rec::Irq { s, what, id, name } => {
            out.push(12);
            u(out, *s);
            out.push(*what as u8);
            u(out, *id);
            out.push(name.is_some().into());
            if let Some(n) = name {
                path(out, n);
            }
        }
        Rec::Block(b) => {
            out.push(13);
            u(out, b.s);
            u(out, b.cpu);
            out.push(b.what as u8);
            for v in [b.dev, b.sector, b.nr] {
                put_u64(out, v);
            }
            opt_i(out, b.tid);
            out.push(b.write.into());
        }
        Rec::BlockDevice { dev, name } => {
            out.push(14);
            put_u64(out, *dev);
            path(out, name);
        }
        Rec::Frame { prev, block } => {
            out.push(15);
            put_opt_i64(out, *prev);
            u(out, *block);
        }
    }
}

/// The bytes of `recs` ([`VERSION`], the count, the records), paths as their bytes.
pub fn encode(recs: &[Rec]) -> Vec<u8> {
    let mut out = vec![VERSION];
    put_u64(&mut out, recs.len() as u64);
    for r in recs {
        put_rec(&mut out, r, |out, p| put_bytes(out, p.as_ref().as_bytes()));
    }
    out
}

/// The records [`encode`] wrote; every byte must be read.
pub fn decode(buf: &[u8]) -> Result<Vec<Rec>, WireError> {
    let mut r = Reader::new(buf);
    r.version(VERSION, "a log")?;
    let n = r.count(2)?;
    let mut recs = Vec::with_capacity(n);
    for _ in 0..n {
        recs.push(r.rec(|r| {
            let at = r.offset();
            let b = r.bytes()?;
            let s = std::str::from_utf8(b).map_err(|e| WireError { offset: at, cause: format!("a path that is not UTF-8: {e}") })?;
            Ok(super::LoggedPath::new(s))
        })?);
    }
    if !r.at_end() {
        return Err(r.error("bytes after the last record"));
    }
    Ok(recs)
}

#[cfg(test)]
mod tests {
    use super::super::LoggedPath;
    use super::*;
    use proptest::prelude::*;

    fn who() -> impl Strategy<Value = Who> {
        prop_oneof![any::<i32>().prop_map(Who::Tid), any::<u32>().prop_map(Who::Head), any::<u32>().prop_map(Who::Stream)]
    }

    fn sc() -> impl Strategy<Value = Sc> {
        (0..Sc::ALL.len()).prop_map(|i| Sc::ALL[i])
    }

    fn path() -> impl Strategy<Value = LoggedPath> {
        ".{0,12}".prop_map(|s| LoggedPath::new(&s))
    }

    fn rec() -> impl Strategy<Value = Rec> {
        let irq =
            prop_oneof![Just(IrqEvent::HardEntry), Just(IrqEvent::HardExit), Just(IrqEvent::SoftRaise), Just(IrqEvent::SoftEntry), Just(IrqEvent::SoftExit)];
        let block = prop_oneof![Just(BlockEvent::Insert), Just(BlockEvent::Issue), Just(BlockEvent::Complete)];
        prop_oneof![
            (who(), sc(), any::<(i32, i32, i32)>(), proptest::option::of(path())).prop_map(|(who, sc, (a0, a1, a2), path)| Rec::Entry {
                who,
                sc,
                a0,
                a1,
                a2,
                path
            }),
            who().prop_map(|who| Rec::OtherEntry { who }),
            (who(), proptest::option::of(sc()), any::<i64>()).prop_map(|(who, sc, ret)| Rec::Exit { who, sc, ret }),
            (who(), proptest::option::of(sc()), any::<[i32; 2]>()).prop_map(|(who, sc, fds)| Rec::Pair { who, sc, fds }),
            any::<(Option<i32>, Option<i32>, i32, Option<i32>)>().prop_map(|(parent_tid, parent_pid, child_tid, child_pid)| Rec::Fork {
                parent_tid,
                parent_pid,
                child_tid,
                child_pid
            }),
            who().prop_map(|who| Rec::Exec { who }),
            any::<(i32, i32)>().prop_map(|(tid, pid)| Rec::ProcState { tid, pid }),
            (any::<(i32, i32, bool)>(), path()).prop_map(|((pid, fd, cloexec), path)| Rec::FdDump { pid, fd, path, cloexec }),
            (any::<i32>(), path()).prop_map(|(tid, name)| Rec::Name { tid, name }),
            any::<(u32, u32, i32, i32, i32)>().prop_map(|(s, cpu, prev, next, prio)| Rec::Switch { s, cpu, prev, next, prio }),
            (who(), any::<u32>()).prop_map(|(who, call)| Rec::Call { who, call }),
            any::<(u32, i32)>().prop_map(|(s, tid)| Rec::Wakeup { s, tid }),
            (any::<(u32, u32)>(), irq, proptest::option::of(path())).prop_map(|((s, id), what, name)| Rec::Irq { s, what, id, name }),
            (any::<(u32, u32, u64, u64, u64, Option<i32>, bool)>(), block)
                .prop_map(|((s, cpu, dev, sector, nr, tid, write), what)| Rec::Block(Box::new(BlockRec { s, cpu, what, dev, sector, nr, tid, write }))),
            (any::<u64>(), path()).prop_map(|(dev, name)| Rec::BlockDevice { dev, name }),
            (any::<Option<i64>>(), any::<u32>()).prop_map(|(prev, block)| Rec::Frame { prev, block }),
        ]
    }

    proptest! {
        #[test]
        fn records_come_back_as_they_went(recs in proptest::collection::vec(rec(), 0..40)) {
            let bytes = encode(&recs);
            prop_assert_eq!(decode(&bytes).unwrap(), recs);
        }

        #[test]
        fn cut_or_damaged_bytes_are_errors_not_panics(recs in proptest::collection::vec(rec(), 1..20), cut in any::<prop::sample::Index>(), flip in any::<(prop::sample::Index, u8)>()) {
            let bytes = encode(&recs);
            // Every proper prefix is short of a record (or of its count).
            let n = cut.index(bytes.len());
            prop_assert!(decode(&bytes[..n]).is_err(), "a prefix of {} of {} bytes decoded", n, bytes.len());
            // A changed byte decodes to something or to an error, never a panic.
            let mut bad = bytes.clone();
            let i = flip.0.index(bad.len());
            bad[i] ^= flip.1.max(1);
            let _ = decode(&bad);
        }
    }

    #[test]
    fn small_values_take_few_bytes_and_extremes_round_trip() {
        let mut out = Vec::new();
        put_i64(&mut out, -1);
        put_u64(&mut out, 127);
        assert_eq!(out, [1, 127]);
        for v in [0, 1, -1, i64::MIN, i64::MAX, 1 << 40, -(1 << 40)] {
            let mut out = Vec::new();
            put_i64(&mut out, v);
            assert_eq!(Reader::new(&out).i64().unwrap(), v);
        }
        let mut out = Vec::new();
        put_u64(&mut out, u64::MAX);
        assert_eq!(out.len(), 10);
        assert_eq!(Reader::new(&out).u64().unwrap(), u64::MAX);
    }

    #[test]
    fn errors_name_the_offset_and_the_cause() {
        let mut bytes = encode(&[Rec::Exec { who: Who::Tid(7) }]);
        assert_eq!(decode(&[1]).unwrap_err().to_string(), "offset 0: a log of version 1, this build reads version 2");
        bytes[2] = 99;
        assert_eq!(decode(&bytes).unwrap_err().to_string(), "offset 2: record tag 99");
        // Eleven bytes of continuation: longer than any 64-bit varint.
        let e = Reader::new(&[0xff; 11]).u64().unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.cause.contains("64 bits"), "{e}");
        // A count larger than the bytes could hold.
        let e = decode(&[VERSION, 0xff, 0xff, 0x03]).unwrap_err();
        assert!(e.cause.contains("count of 65535"), "{e}");
    }
}
