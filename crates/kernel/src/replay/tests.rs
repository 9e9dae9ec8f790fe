//! The replay's unit tests.

use super::*;

#[test]
fn each_tid_keeps_one_slot_in_the_direct_table_and_beyond_it() {
    let mut r = Replay::<()>::default();
    let tids = [0, 1, 7, 4096, 1 << 20, (DIRECT_TIDS - 1) as i32, DIRECT_TIDS as i32, i32::MAX, -1, i32::MIN];
    let slots: Vec<usize> = tids.iter().map(|&t| r.slot(t)).collect();
    // New tids get new slots, in order; asking again finds the same ones.
    assert_eq!(slots, (0..tids.len()).collect::<Vec<_>>());
    for (&t, &i) in tids.iter().zip(&slots) {
        assert_eq!(r.find(t), Some(i), "tid {t}");
        assert_eq!(r.slot(t), i, "tid {t}");
        assert_eq!(r.slots[i].tid, t);
    }
    assert_eq!(r.find(2), None);
    assert_eq!(r.find(DIRECT_TIDS as i32 + 1), None);
    // The direct table covers tids below DIRECT_TIDS only, and never grows past it.
    assert_eq!(r.by_tid.len(), DIRECT_TIDS);
    assert_eq!(r.tids.len(), 4);
}

/// A sink that counts bytes per thread and names files by a list (and, with
/// `ends`, lists each call ended with its fd and file name).
#[derive(Default)]
struct Bytes {
    names: Vec<String>,
    ends: Option<Vec<(i32, i32, Option<String>)>>,
}

impl FileNames for Bytes {
    fn named(&mut self, name: &str) -> u32 {
        self.names.push(name.to_owned());
        self.names.len() as u32 - 1
    }
    fn held(&mut self, fd: i32) -> u32 {
        self.named(&format!("unknown (fd {fd})"))
    }
}

impl Sink for Bytes {
    type Thread = [u64; 2];
    fn moved(&mut self, _tid: i32, _pid: Option<i32>, data: &mut [u64; 2], t: Transfer) {
        data[usize::from(!t.read)] += t.bytes;
    }
    fn wants_calls(&self) -> bool {
        self.ends.is_some()
    }
    fn completed(&mut self, tid: i32, _data: &mut [u64; 2], c: Completed) {
        if let Some(e) = c.ended {
            let name = e.file.map(|f| self.names[f as usize].clone());
            self.ends.as_mut().unwrap().push((tid, e.fd, name));
        }
    }
}

#[test]
fn a_replay_tells_its_sink_the_fd_and_file_of_each_call_ended() {
    let (mut r, mut sink) = (Replay::<[u64; 2]>::default(), Bytes { ends: Some(Vec::new()), ..Default::default() });
    let who = Who::Tid(10);
    let call = |r: &mut Replay<[u64; 2]>, sink: &mut Bytes, sc: Sc, a0: i32, path: Option<&str>, ret: i64| {
        r.apply(Rec::Entry { who, sc, a0, a1: 0, a2: 0, path }, None, sink);
        r.apply::<&str, _>(Rec::Exit { who, sc: Some(sc), ret }, None, sink);
    };
    r.apply::<&str, _>(Rec::ProcState { tid: 10, pid: 9 }, None, &mut sink);
    call(&mut r, &mut sink, Sc::Open, -1, Some("/etc/x"), 3);
    // A failed open works on no fd; a read that moved nothing still names its file.
    call(&mut r, &mut sink, Sc::Open, -1, Some("/nope"), -2);
    call(&mut r, &mut sink, Sc::Read, 3, None, 0);
    call(&mut r, &mut sink, Sc::Socket, 2, None, 4);
    call(&mut r, &mut sink, Sc::Close, 3, None, 0);
    // After the close, fd 3 names nothing: a read that fails on it names no file; bytes
    // moved on it go to a placeholder.
    call(&mut r, &mut sink, Sc::Read, 3, None, -9);
    call(&mut r, &mut sink, Sc::Write, 3, None, 5);
    // The log's joined read/write records too.
    r.apply_l(LRec::Rw { t: 10, sc: Sc::Write, fd: 4, ret: -11, exited: true }, &mut sink);
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        sink.ends.unwrap(),
        vec![
            (10, 3, s("/etc/x")),
            (10, 3, s("/etc/x")),
            (10, 4, s("socket")),
            (10, 3, s("/etc/x")),
            (10, 3, None),
            (10, 3, s("unknown (fd 3)")),
            (10, 4, s("socket")),
        ]
    );
}

/// A sink that lists each call completed.
#[derive(Default)]
struct Calls(Vec<Completed>);

impl FileNames for Calls {
    fn named(&mut self, _: &str) -> u32 {
        0
    }
    fn held(&mut self, _: i32) -> u32 {
        1
    }
}

impl Sink for Calls {
    type Thread = ();
    fn moved(&mut self, _: i32, _: Option<i32>, _: &mut (), _: Transfer) {}
    fn wants_calls(&self) -> bool {
        true
    }
    fn completed(&mut self, _: i32, _: &mut (), c: Completed) {
        self.0.push(c);
    }
}

#[test]
fn a_replay_completes_each_call_under_its_entrys_name_and_time() {
    let (mut r, mut sink) = (Replay::<()>::default(), Calls::default());
    let who = Who::Tid(10);
    let i = r.slot(10);
    // A read (name 5) from 100 to 150; a call the model does not interpret (name 6)
    // completed by a mismatched exit; an exit with nothing pending: nothing.
    r.at(100, 5);
    r.enter_rw(i, Sc::Read, 3);
    r.at(150, 0);
    r.exit(i, Some(Sc::Read), 8, &mut sink);
    r.at(200, 6);
    r.other_entry(i);
    r.at(260, NO_RET);
    r.exit(i, Some(Sc::Close), -1, &mut sink);
    r.at(270, 0);
    r.exit(i, None, 0, &mut sink);
    // An uncounted exit leaves the call pending for the latency (the fd rules take
    // it: the open's fd is named), the next exit completes it.
    r.at(300, 7);
    r.apply(Rec::Entry { who, sc: Sc::Open, a0: -1, a1: 0, a2: 0, path: Some("/a") }, None, &mut sink);
    r.at(320, UNCOUNTED);
    r.apply::<&str, _>(Rec::Exit { who, sc: Some(Sc::Open), ret: 4 }, None, &mut sink);
    assert_eq!(r.fds.file(10, 4), Some(0));
    r.at(350, 0);
    r.exit(i, None, 2, &mut sink);
    let c = |name, begin, end, ret, ended| Completed { name, begin, end, ret, ended };
    assert_eq!(sink.0, vec![c(5, 100, 150, 8, Some(Ended::on(3, Some(1)))), c(6, 200, 260, 0, None), c(7, 300, 350, 2, None)]);
}

#[test]
fn a_thread_is_called_by_its_last_name_and_its_pending_call_by_the_renamed_id() {
    let (mut r, mut sink) = (Replay::<()>::default(), Calls::default());
    let name = |tid, name| Rec::Name { tid, name };
    // A fork names the child, an exec renames it; a thread never named has none.
    r.apply(name(11, "bash"), None, &mut sink);
    r.apply(name(11, "ls"), None, &mut sink);
    let other = r.slot(12);
    let i = r.find(11).unwrap();
    assert_eq!((r.name(i), r.name(other)), (Some("ls"), None));
    // New metadata renumbers the event names: a call pending across it keeps its
    // name under the new id.
    r.at(10, 3);
    r.other_entry(i);
    r.rename_calls(|c| c + 1);
    r.at(20, 0);
    r.exit(i, None, 0, &mut sink);
    assert_eq!(sink.0, vec![Completed { name: 4, begin: 10, end: 20, ret: 0, ended: None }]);
}

#[test]
fn a_replay_tells_its_sink_the_bytes_of_each_thread() {
    let (mut r, mut sink) = (Replay::<[u64; 2]>::default(), Bytes::default());
    let who = Who::Tid(10);
    r.apply::<&str, _>(Rec::ProcState { tid: 10, pid: 9 }, None, &mut sink);
    r.apply(Rec::Entry { who, sc: Sc::Open, a0: -1, a1: 0, a2: 0, path: Some("/etc/x") }, None, &mut sink);
    r.apply::<&str, _>(Rec::Exit { who, sc: Some(Sc::Open), ret: 3 }, None, &mut sink);
    r.apply::<&str, _>(Rec::Entry { who, sc: Sc::Read, a0: 3, a1: 0, a2: 0, path: None }, None, &mut sink);
    r.apply::<&str, _>(Rec::Exit { who, sc: Some(Sc::Read), ret: 100 }, None, &mut sink);
    // An exit of another call ends the pending one and moves nothing.
    r.apply::<&str, _>(Rec::Entry { who, sc: Sc::Write, a0: 3, a1: 0, a2: 0, path: None }, None, &mut sink);
    r.apply::<&str, _>(Rec::Exit { who, sc: Some(Sc::Read), ret: 50 }, None, &mut sink);
    // A read-write record joined by the log, on an fd nothing names: held.
    r.apply_l(LRec::Rw { t: 10, sc: Sc::Write, fd: 7, ret: 20, exited: true }, &mut sink);
    let held = r.apply(Rec::FdDump { pid: 9, fd: 7, path: "/var/log", cloexec: false }, None, &mut sink);
    let i = r.find(10).unwrap();
    assert_eq!(*r.data_mut(i), [100, 20]);
    assert_eq!(r.pid_of(10), 9);
    let (h, f) = held.expect("bytes were held for fd 7");
    assert_eq!((sink.names[h as usize].as_str(), sink.names[f as usize].as_str()), ("unknown (fd 7)", "/var/log"));
}
