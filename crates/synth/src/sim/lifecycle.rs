//! Process life cycle: fork, exec, exit.

use std::sync::Arc;

use rand::Rng;

use crate::error::Result;
use crate::events::{comm, KEvent};
use crate::workload::PROGRAMS;

use super::{EventSink, Sim, State, TASK_DEAD};

impl<'s, S: EventSink> Sim<'s, S> {
    pub(super) fn fork(&mut self, c: usize, t: u64, parent: i32) -> Result<()> {
        let (ppid, pcomm) = (self.threads[&parent].pid, self.threads[&parent].comm);
        let prog = self.procs[&ppid].program;
        let as_thread = (self.procs[&ppid].threads.len() as u32) < PROGRAMS[prog].max_threads && self.rng.gen_bool(0.6);
        let child = if as_thread {
            let tid = self.new_thread(ppid, prog, pcomm);
            if let Some(p) = self.procs.get_mut(&ppid) {
                p.threads.push(tid);
            }
            tid
        } else {
            let pid = self.new_process(prog, None);
            let fds = self.procs[&ppid].fds.clone();
            let p = self.procs.get_mut(&pid).expect("just created");
            p.fds = fds;
            let tid = p.threads[0];
            if let Some(th) = self.threads.get_mut(&tid) {
                th.comm = pcomm;
            }
            tid
        };
        let cpid = self.threads[&child].pid;
        if let Some(th) = self.threads.get_mut(&child) {
            th.last_cpu = c;
        }
        let ev = KEvent::Fork { parent_comm: pcomm, parent_tid: parent, parent_pid: ppid, child_comm: pcomm, child_tid: child, child_pid: cpid };
        let ts = self.emit(c, t, ev)?;
        self.make_runnable(child, ts);
        self.plan(c, ts);
        Ok(())
    }

    pub(super) fn exec(&mut self, c: usize, t: u64, tid: i32) -> Result<()> {
        let prog = self.rng.gen_range(0..PROGRAMS.len() - 3);
        let filename: Arc<str> = Arc::from(format!("/usr/bin/{}", PROGRAMS[prog].name));
        let ts = self.emit(c, t, KEvent::Exec { filename, tid, old_tid: tid })?;
        let pid = self.threads[&tid].pid;
        if let Some(p) = self.procs.get_mut(&pid) {
            p.program = prog;
        }
        if let Some(th) = self.threads.get_mut(&tid) {
            th.comm = comm(PROGRAMS[prog].name);
            th.burst_ns = PROGRAMS[prog].burst_ns;
        }
        self.plan(c, ts);
        Ok(())
    }

    pub(super) fn exit_thread(&mut self, c: usize, t: u64, tid: i32) -> Result<()> {
        let (pid, name, prio) = (self.threads[&tid].pid, self.threads[&tid].comm, self.threads[&tid].prio);
        let ts = self.emit(c, t, KEvent::Exit { comm: name, tid, prio })?;
        if let Some(th) = self.threads.get_mut(&tid) {
            th.state = State::Dead;
        }
        self.tally.tid_info.insert(tid, (pid, name));
        self.live -= 1;
        let empty = self.procs.get_mut(&pid).map(|p| {
            p.threads.retain(|&x| x != tid);
            p.threads.is_empty()
        });
        let d = self.rng.gen_range(1_000..8_000);
        self.switch_away(c, ts + d, TASK_DEAD)?;
        self.threads.remove(&tid);
        if empty == Some(true) {
            self.procs.remove(&pid);
        }
        Ok(())
    }
}
