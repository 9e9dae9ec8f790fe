//! Syscalls as io reads them: from events (by name, generation and raw number) or
//! from fields copied as they are read, handed to a sink that interprets them at once
//! ([`Interpret`]) or logs them for a later merge ([`Logged`]).

use ctf::stream::{Copied, CopyRequest, EventRef};

use kernel::fdtable::Call;
use kernel::latency::raw_call;
use kernel::layout::{raw_entry, unknown_entry, Arch, EvClass, Kind, Sc};
use kernel::model::switch_request;

use super::replay::Replay;
use super::{Rec, Who};
use kernel::log::Log;

/// A signed integer field, or -1 when absent.
#[inline(always)]
pub(super) fn int_or(ev: &EventRef<'_, '_>, h: &Option<ctf::plan::FieldHandle>) -> i64 {
    h.as_ref().and_then(|h| ev.int(*h)).unwrap_or(-1)
}

/// The call of a syscall entry event with argument handles `a0..a2`.
#[inline(always)]
pub(super) fn call_of(ev: &EventRef<'_, '_>, sc: Sc, [a0, a1, a2]: [&Option<ctf::plan::FieldHandle>; 3]) -> Call {
    Call::new(sc, int_or(ev, a0), int_or(ev, a1), int_or(ev, a2))
}

/// The syscall (`None`: unknown or generic) and return value of an exit event.
#[inline(always)]
fn exit_of(ev: &EventRef<'_, '_>, kind: &Kind) -> Option<(Option<Sc>, i64)> {
    match *kind {
        Kind::Exit { sc, ref ret, fds: None } => Some((sc, int_or(ev, ret))),
        Kind::RawExit { id, ref ret, arch } => Some((ev.uint(id).and_then(|nr| Sc::from_raw(arch, nr)), int_or(ev, ret))),
        _ => None,
    }
}

/// A syscall event as the fast paths take it (`Io::syscall_fast`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Syscall {
    /// Entry of a syscall we understand that names no path.
    Entry(Call),
    /// Entry of another syscall (raw entries too: their arguments are not decoded).
    Other,
    /// An exit: the syscall, when known, and `ret`.
    Exit(Option<Sc>, i64),
}

impl Syscall {
    /// Hands this syscall event to `sink`.
    #[inline(always)]
    pub(super) fn feed(self, mut sink: impl SyscallSink) {
        match self {
            Syscall::Entry(call) => sink.enter(call),
            Syscall::Other => sink.other_entry(),
            Syscall::Exit(sc, ret) => sink.exit(sc, ret),
        }
    }

    /// The record of this syscall event, issued by `who`.
    #[inline(always)]
    pub(super) fn record<P>(self, who: Who) -> Rec<P> {
        match self {
            Syscall::Entry(Call { sc, a0, a1, a2 }) => Rec::Entry { who, sc, a0, a1, a2, path: None },
            Syscall::Other => Rec::OtherEntry { who },
            Syscall::Exit(sc, ret) => Rec::Exit { who, sc, ret },
        }
    }
}

/// Where the fast paths put a syscall event of a known thread: interpreted at once
/// ([`Interpret`], a complete state) or logged ([`Logged`], a chunk state).
pub(super) trait SyscallSink {
    /// Entry of `call` (that names no path).
    fn enter(&mut self, call: Call);
    /// Entry of a read or write `sc` of `fd`, its other arguments absent.
    fn enter_rw(&mut self, sc: Sc, fd: i64);
    /// Entry of a syscall the analysis does not interpret.
    fn other_entry(&mut self);
    /// Exit of `sc` (`None`: a generic exit) returning `ret`.
    fn exit(&mut self, sc: Option<Sc>, ret: i64);
}

/// A complete state's replay, for the thread of slot `slot`.
pub(super) struct Interpret<'a> {
    pub(super) replay: &'a mut Replay,
    pub(super) slot: usize,
}

impl SyscallSink for Interpret<'_> {
    #[inline(always)]
    fn enter(&mut self, call: Call) {
        self.replay.enter(self.slot, call);
    }

    #[inline(always)]
    fn enter_rw(&mut self, sc: Sc, fd: i64) {
        self.replay.enter_rw(self.slot, sc, fd);
    }

    #[inline(always)]
    fn other_entry(&mut self) {
        self.replay.other_entry(self.slot);
    }

    #[inline(always)]
    fn exit(&mut self, sc: Option<Sc>, ret: i64) {
        self.replay.exit(self.slot, sc, ret);
    }
}

/// A chunk state's log, for thread `tid`.
pub(super) struct Logged<'a> {
    pub(super) log: &'a mut Log,
    pub(super) tid: i32,
}

impl SyscallSink for Logged<'_> {
    #[inline(always)]
    fn enter(&mut self, call: Call) {
        self.log.push_entry(self.tid, call);
    }

    #[inline(always)]
    fn enter_rw(&mut self, sc: Sc, fd: i64) {
        // (Truncated as `Call::new` truncates an argument.)
        self.log.push_rw_entry(self.tid, sc, fd as i32);
    }

    #[inline(always)]
    fn other_entry(&mut self) {
        self.log.push_other_entry(self.tid);
    }

    #[inline(always)]
    fn exit(&mut self, sc: Option<Sc>, ret: i64) {
        self.log.push_exit(self.tid, sc, ret);
    }
}

/// The [`Syscall`] of an event of kind `kind` (`None`: not one, an entry naming a
/// path or an exit that may carry two fds).
#[inline(always)]
pub(super) fn syscall_of(ev: &EventRef<'_, '_>, kind: &Kind) -> Option<Syscall> {
    Some(match kind {
        Kind::Entry { sc, a0, a1, a2, path: None } => Syscall::Entry(call_of(ev, *sc, [a0, a1, a2])),
        Kind::OtherEntry => Syscall::Other,
        Kind::UnknownEntry { id, args } => match unknown_entry(ev, *id, *args) {
            Some((sc, [a0, a1, a2])) => Syscall::Entry(Call::new(sc, a0, a1, a2)),
            None => Syscall::Other,
        },
        Kind::RawEntry { id, args, arch } => match raw_entry(ev, *id, *args, *arch) {
            Some((sc, [a0, a1, a2])) => Syscall::Entry(Call::new(sc, a0, a1, a2)),
            None => Syscall::Other,
        },
        Kind::Exit { fds: None, .. } | Kind::RawExit { .. } => {
            let (sc, ret) = exit_of(ev, kind)?;
            Syscall::Exit(sc, ret)
        }
        _ => return None,
    })
}

/// How a syscall class's copied fields ([`Selective::copies`](engine::Selective::copies)) are read: the label's
/// high bits say which form (one bit each, so that a form is told by a bit test), its
/// low byte which syscall (`Sc as u32`; [`Label::NO_SC`]: none).
pub(crate) struct Label;

impl Label {
    pub(crate) const ENTRY: u32 = 1 << 8;
    /// An entry whose only argument is its fd (read/write families, close, dup): one
    /// field copied, `[a0]`, the others read as absent.
    pub(crate) const ENTRY_FD: u32 = 1 << 9;
    /// [`Label::ENTRY_FD`] of the read or write family.
    pub(crate) const ENTRY_RW: u32 = 1 << 14;
    pub(crate) const OTHER: u32 = 1 << 10;
    pub(crate) const EXIT: u32 = 1 << 11;
    /// A raw `sys_exit`: `[id, ret]`, the architecture ([`Arch::index`]) in the low
    /// byte.
    pub(crate) const RAW_EXIT: u32 = 1 << 12;
    /// `sched_switch` with `char[16]` names (or none): `[prev_tid, next_tid, prev_comm,
    /// next_comm]`.
    pub(crate) const SWITCH: u32 = 1 << 13;
    const NO_SC: u32 = 0xff;
    /// A raw `sys_enter` ([`Label::OTHER`] with `[id]` copied) in a named request.
    const RAW_ENTRY: u32 = 1 << 15;
    /// Where a named request's entry label holds its [`kernel::latency::CallId`] + 1.
    const CALL_SHIFT: u32 = 16;

    /// The copy request of class `c` when the replay wants each event's tag
    /// ([`kernel::replay::Replay::at`]): [`Label::request`]'s, with an entry's call name
    /// in the label's high bits (the dispatch reads the low 16) and a raw entry's
    /// number copied; `None` where [`Label::request`] takes no copy, for an exit that
    /// has no return value (its tag says so: the general path), or for a name past the
    /// label's room.
    pub(crate) fn named_request(c: &EvClass) -> Option<CopyRequest> {
        let mut r = Label::request(&c.kind)?;
        match c.kind {
            Kind::Exit { ret: None, .. } | Kind::RawExit { ret: None, .. } => return None,
            Kind::RawEntry { id, .. } => {
                r.label |= Label::RAW_ENTRY;
                r.fields = vec![Some(id)];
            }
            Kind::Entry { .. } | Kind::OtherEntry => {
                if c.name >= (u32::MAX >> Label::CALL_SHIFT) {
                    return None;
                }
                r.label |= (c.name + 1) << Label::CALL_SHIFT;
            }
            _ => {}
        }
        Some(r)
    }

    /// The tag of the event whose fields [`Label::named_request`]'s request copied: an
    /// entry's call name, 0 for an exit (it has a return value, and the CPU filter
    /// copies nothing).
    #[inline(always)]
    pub(super) fn tag(c: &Copied<'_>) -> u32 {
        let label = c.label();
        if label & Label::RAW_ENTRY != 0 {
            raw_call(c.get(0))
        } else {
            (label >> Label::CALL_SHIFT).saturating_sub(1)
        }
    }

    /// The copy request of a class of kind `kind` (for syscalls, the fields
    /// [`syscall_of`] reads, in the same order); `None` for kinds the fast paths do not
    /// take.
    pub(crate) fn request(kind: &Kind) -> Option<CopyRequest> {
        let sc = |sc: Option<Sc>| sc.map_or(Label::NO_SC, |s| s as u32);
        let (label, fields) = match *kind {
            Kind::Entry { sc: s @ (Sc::Read | Sc::Write), a0, a1: None, a2: None, path: None } => (Label::ENTRY_RW | sc(Some(s)), vec![a0]),
            Kind::Entry { sc: s, a0, a1: None, a2: None, path: None } => (Label::ENTRY_FD | sc(Some(s)), vec![a0]),
            Kind::Entry { sc: s, a0, a1, a2, path: None } => (Label::ENTRY | sc(Some(s)), vec![a0, a1, a2]),
            // (A raw entry with its arguments may be a call on an fd: the general path.)
            Kind::OtherEntry | Kind::RawEntry { args: None, .. } => (Label::OTHER, vec![]),
            Kind::Exit { sc: s, ret, fds: None } => (Label::EXIT | sc(s), vec![ret]),
            Kind::RawExit { id, ret, arch } => (Label::RAW_EXIT | arch.index(), vec![Some(id), ret]),
            Kind::Switch { .. } => return switch_request(kind, Label::SWITCH),
            _ => return None,
        };
        Some(CopyRequest { label, fields })
    }

    /// Hands the syscall event whose fields [`Label::request`]'s request copied to
    /// `sink` (absent fields read as -1, as [`int_or`] reads them); false, with nothing
    /// done, when its label names no syscall. Bit tests, the common forms first (no
    /// jump table's indirect jump): exits (of every call), then the entries of reads
    /// and writes.
    #[inline(always)]
    pub(super) fn dispatch(c: &Copied<'_>, mut sink: impl SyscallSink) -> bool {
        let label = c.label();
        // Entries name a syscall (`request` puts one in their low byte), so never
        // `None` (the fallback is never taken).
        let entry_sc = || Sc::from_index(label & 0xff).unwrap_or(Sc::Read);
        let v = |i: usize| c.get(i) as i64;
        if label & Label::EXIT != 0 {
            sink.exit(Sc::from_index(label & 0xff), v(0));
        } else if label & Label::ENTRY_RW != 0 {
            sink.enter_rw(entry_sc(), v(0));
        } else if label & Label::ENTRY_FD != 0 {
            sink.enter(Call::new(entry_sc(), v(0), -1, -1));
        } else if label & Label::ENTRY != 0 {
            sink.enter(Call::new(entry_sc(), v(0), v(1), v(2)));
        } else if label & Label::OTHER != 0 {
            sink.other_entry();
        } else if label & Label::RAW_EXIT != 0 {
            sink.exit(Sc::from_raw(Arch::from_index(label & 0xff), c.get(0)), v(1));
        } else {
            // (No other label names a syscall.)
            return false;
        }
        true
    }
}
