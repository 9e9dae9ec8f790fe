//! The population the simulation draws from: program kinds, their files and I/O habits.

/// A kind of program: its name, the files it opens and how it does I/O.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// Process name (`comm`).
    pub name: &'static str,
    /// Files it opens (paths).
    pub files: &'static [&'static str],
    /// Relative weight of reads among its I/O syscalls (0..=100; the rest are writes).
    pub read_pct: u32,
    /// Typical I/O size in bytes.
    pub io_size: u64,
    /// Mean CPU burst between syscalls, in ns.
    pub burst_ns: u64,
    /// Most threads a process of this kind has.
    pub max_threads: u32,
}

/// The programs of the synthetic machine (the last two user ones, `bash` and `sshd`, are
/// never exec'd into; the last one is pid 1).
pub const PROGRAMS: &[Program] = &[
    Program {
        name: "nginx",
        files: &["/var/log/nginx/access.log", "/srv/www/index.html", "/srv/www/style.css", "/srv/www/img/logo.png"],
        read_pct: 55,
        io_size: 8192,
        burst_ns: 20_000,
        max_threads: 4,
    },
    Program {
        name: "postgres",
        files: &[
            "/var/lib/postgresql/15/main/base/16384/1259",
            "/var/lib/postgresql/15/main/pg_wal/000000010000000000000001",
            "/var/lib/postgresql/15/main/global/pg_control",
        ],
        read_pct: 60,
        io_size: 8192,
        burst_ns: 40_000,
        max_threads: 3,
    },
    Program {
        name: "rustc",
        files: &["/home/u/proj/src/main.rs", "/home/u/proj/src/lib.rs", "/home/u/proj/target/debug/deps/libcore.rlib", "/home/u/proj/target/debug/proj"],
        read_pct: 70,
        io_size: 65536,
        burst_ns: 200_000,
        max_threads: 4,
    },
    Program {
        name: "python3",
        files: &["/usr/lib/python3.11/os.py", "/home/u/data/input.csv", "/home/u/data/output.json"],
        read_pct: 65,
        io_size: 4096,
        burst_ns: 80_000,
        max_threads: 2,
    },
    Program {
        name: "backup",
        files: &["/srv/backup/archive.tar", "/home/u/data/input.csv", "/etc/passwd"],
        read_pct: 45,
        io_size: 131072,
        burst_ns: 30_000,
        max_threads: 2,
    },
    Program { name: "rsyslogd", files: &["/var/log/syslog", "/var/log/auth.log", "/dev/kmsg"], read_pct: 20, io_size: 512, burst_ns: 10_000, max_threads: 3 },
    Program { name: "bash", files: &["/home/u/.bash_history", "/etc/bash.bashrc"], read_pct: 50, io_size: 256, burst_ns: 15_000, max_threads: 1 },
    Program { name: "sshd", files: &["/var/log/auth.log", "/etc/ssh/sshd_config"], read_pct: 50, io_size: 1024, burst_ns: 12_000, max_threads: 1 },
    // Last: pid 1, never created otherwise.
    Program { name: "systemd", files: &["/run/systemd/journal/socket", "/proc/self/mountinfo"], read_pct: 70, io_size: 1024, burst_ns: 25_000, max_threads: 1 },
];

/// Path of the terminal that fds 0, 1 and 2 point to.
pub const TTY: &str = "/dev/pts/0";
