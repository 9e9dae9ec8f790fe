//! Syscalls: their entries, the files they open, read, write and close, and their exits
//! (possibly on another CPU, after the thread blocked).

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::error::Result;
use crate::events::{KEvent, Syscall, SyscallArgs};
use crate::workload::PROGRAMS;

use super::{Effect, EventSink, Pending, Process, Sim, State, AT_FDCWD, TASK_INTERRUPTIBLE};

impl<'s, S: EventSink> Sim<'s, S> {
    pub(super) fn pick_file(&mut self, prog: usize) -> Arc<str> {
        let files = PROGRAMS[prog].files;
        Arc::from(files[self.rng.gen_range(0..files.len())])
    }

    pub(super) fn syscall(&mut self, c: usize, t: u64, tid: i32) -> Result<()> {
        let pid = self.threads[&tid].pid;
        let proc_ = &self.procs[&pid];
        let n_user = proc_.fds.range(3..).count();
        // Keep fd tables small and stable: open more when few are open, close more when many.
        let (p_open, p_close) = match n_user {
            0 => (0.5, 0.0),
            1..=5 => (0.05, 0.04),
            6..=10 => (0.03, 0.06),
            _ => (0.01, 0.15),
        };
        let r: f64 = self.rng.gen();
        let pick_user = |rng: &mut ChaCha8Rng, p: &Process| -> i32 {
            let k = rng.gen_range(0..n_user.max(1));
            p.fds.range(3..).nth(k).map(|(&fd, _)| fd).unwrap_or(0)
        };
        let (call, args, pending, may_block) = if r < p_open {
            let file = self.pick_file(self.procs[&pid].program);
            let fail = self.rng.gen_bool(0.03);
            let flags = if self.rng.gen_bool(0.5) { 0 } else { 0o1101 };
            let args = SyscallArgs::Openat { dfd: AT_FDCWD, filename: file.clone(), flags, mode: 0o644 };
            let effect = if fail { Effect::Fail } else { Effect::Open { file } };
            (Syscall::Openat, args, Pending { uses: None, closes: None, call: Syscall::Openat, ret: -2, buf: 0, effect }, false)
        } else if r < p_open + p_close {
            let fd = pick_user(&mut self.rng, &self.procs[&pid]);
            if self.procs[&pid].busy(fd) {
                return self.compute(c, t, tid);
            }
            (
                Syscall::Close,
                SyscallArgs::Close { fd },
                Pending { uses: None, closes: Some(fd), call: Syscall::Close, ret: 0, buf: 0, effect: Effect::Close { fd } },
                false,
            )
        } else if r < p_open + p_close + 0.02 && (1..=10).contains(&n_user) {
            let fd = pick_user(&mut self.rng, &self.procs[&pid]);
            let file = self.procs[&pid].fds[&fd].clone();
            if self.procs[&pid].closing.contains(&fd) {
                return self.compute(c, t, tid);
            }
            if self.rng.gen_bool(0.5) {
                (
                    Syscall::Dup,
                    SyscallArgs::Dup { fildes: fd },
                    Pending { uses: Some(fd), closes: None, call: Syscall::Dup, ret: 0, buf: 0, effect: Effect::Dup { file } },
                    false,
                )
            } else {
                let newfd = self.rng.gen_range(3..12);
                if newfd == fd || self.procs[&pid].busy(newfd) {
                    return self.compute(c, t, tid);
                }
                let p =
                    Pending { uses: Some(fd), closes: Some(newfd), call: Syscall::Dup2, ret: i64::from(newfd), buf: 0, effect: Effect::Dup2 { newfd, file } };
                (Syscall::Dup2, SyscallArgs::Dup2 { oldfd: fd, newfd }, p, false)
            }
        } else {
            // Read or write on an open fd (stdio included).
            let p = &self.procs[&pid];
            let fd = if n_user == 0 || self.rng.gen_bool(0.1) {
                let k = self.rng.gen_range(0..p.fds.len());
                p.fds.keys().nth(k).copied().unwrap_or(0)
            } else {
                pick_user(&mut self.rng, p)
            };
            if p.closing.contains(&fd) {
                return self.compute(c, t, tid);
            }
            let file = p.fds[&fd].clone();
            let (read_pct, io_size) = (PROGRAMS[p.program].read_pct, PROGRAMS[p.program].io_size);
            let read = self.rng.gen_range(0..100) < read_pct;
            let count = (io_size >> self.rng.gen_range(0..4)).max(1) * self.rng.gen_range(1..3);
            let buf = 0x7f00_0000_0000 + (self.rng.gen_range(0..1u64 << 30) & !0xfff);
            let kind = self.rng.gen_range(0..10);
            let (call, vlen) = match (read, kind) {
                (true, 0..=5) => (Syscall::Read, count),
                (true, 6..=8) => (Syscall::Pread64, count),
                (true, _) => (Syscall::Readv, self.rng.gen_range(1..4)),
                (false, 0..=5) => (Syscall::Write, count),
                (false, 6..=8) => (Syscall::Pwrite64, count),
                (false, _) => (Syscall::Writev, self.rng.gen_range(1..4)),
            };
            let pos = if matches!(call, Syscall::Pread64 | Syscall::Pwrite64) { self.rng.gen_range(0..1i64 << 30) & !0xfff } else { 0 };
            let args = if read { SyscallArgs::Read { fd, buf, count: vlen, pos } } else { SyscallArgs::Write { fd, buf, count: vlen, pos } };
            let o = self.rng.gen_range(0..100);
            let ret = match o {
                0..=1 => -11,
                2..=4 if read => 0,
                5..=14 => (count / 3) as i64,
                _ => count as i64,
            };
            let effect = Effect::Bytes { file, read };
            (call, args, Pending { uses: Some(fd), closes: None, call, ret, buf, effect }, true)
        };
        let ts = self.emit(c, t, KEvent::SyscallEntry(call, args))?;
        {
            let p = self.procs.get_mut(&pid).expect("live");
            if let Some(fd) = pending.uses {
                *p.inflight.entry(fd).or_insert(0) += 1;
            }
            if let Some(fd) = pending.closes {
                p.closing.insert(fd);
            }
        }
        let block_p = match call {
            Syscall::Read | Syscall::Pread64 | Syscall::Readv => 0.25,
            _ => 0.08,
        };
        if may_block && self.rng.gen_bool(block_p) {
            if let Some(th) = self.threads.get_mut(&tid) {
                th.pending = Some(pending);
                th.state = State::Blocked;
            }
            let d = self.rng.gen_range(1_000..4_000);
            let out = self.switch_away(c, ts + d, TASK_INTERRUPTIBLE)?;
            let sleep = self.rng.gen_range(20_000..3_000_000);
            self.schedule_wake(tid, out + sleep);
        } else {
            // The exit happens later in simulated time, like any other action: its
            // effects (a new fd, a closed one) must not be visible to the other CPUs
            // before its timestamp.
            let d = self.rng.gen_range(300..15_000);
            if let Some(th) = self.threads.get_mut(&tid) {
                th.pending = Some(pending);
            }
            self.schedule_cpu(c, ts + d);
        }
        Ok(())
    }

    /// A burst without a syscall (used when a chosen syscall would be unsafe).
    fn compute(&mut self, c: usize, t: u64, _tid: i32) -> Result<()> {
        self.plan(c, t);
        Ok(())
    }

    pub(super) fn exit_syscall(&mut self, c: usize, t: u64, tid: i32, p: Pending) -> Result<u64> {
        let pid = self.threads[&tid].pid;
        let proc_ = self.procs.get_mut(&pid).expect("live thread has a process");
        let mut ret = p.ret;
        if let Some(fd) = p.uses {
            if let Some(n) = proc_.inflight.get_mut(&fd) {
                *n = n.saturating_sub(1);
            }
        }
        if let Some(fd) = p.closes {
            proc_.closing.remove(&fd);
        }
        match &p.effect {
            Effect::Open { file } | Effect::Dup { file } => {
                let fd = lowest_free_fd(&proc_.fds);
                proc_.fds.insert(fd, file.clone());
                ret = i64::from(fd);
            }
            Effect::Close { fd } => {
                proc_.fds.remove(fd);
            }
            Effect::Dup2 { newfd, file } => {
                proc_.fds.insert(*newfd, file.clone());
            }
            Effect::Bytes { .. } | Effect::Fail => {}
        }
        let ts = self.emit(c, t, KEvent::SyscallExit { call: p.call, ret, buf: p.buf })?;
        if let Effect::Bytes { file, read, .. } = p.effect {
            if ret > 0 {
                let n = ret as u64;
                let e = self.tally.tid.entry(tid).or_default();
                let f = self.tally.files.entry(file).or_default();
                if read {
                    e.1 += n;
                    f.0 += n;
                } else {
                    e.2 += n;
                    f.1 += n;
                }
            }
        }
        Ok(ts)
    }
}

impl Process {
    /// Whether `fd` is in use by a pending syscall or about to be closed or replaced.
    fn busy(&self, fd: i32) -> bool {
        self.inflight.get(&fd).copied().unwrap_or(0) > 0 || self.closing.contains(&fd)
    }
}

pub(super) fn lowest_free_fd(fds: &BTreeMap<i32, Arc<str>>) -> i32 {
    (3..).find(|fd| !fds.contains_key(fd)).unwrap_or(3)
}
