//! A real `skillpm-registry` process on 127.0.0.1. The binary is a
//! parameter: the registry's own tests have it from Cargo
//! (`CARGO_BIN_EXE_skillpm-registry`), the client's tests build it.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// How to start a registry: `EXE serve --listen 127.0.0.1:0 ARGS...`.
#[derive(Clone, Debug)]
pub struct Serve {
    exe: PathBuf,
    args: Vec<OsString>,
    data: PathBuf,
    quiet: bool,
    open_files_limit: Option<u32>,
}

impl Serve {
    /// A server from the binary `exe`, its log on this process's stderr.
    pub fn new(exe: impl Into<PathBuf>) -> Serve {
        Serve {
            exe: exe.into(),
            args: Vec::new(),
            data: PathBuf::new(),
            quiet: false,
            open_files_limit: None,
        }
    }

    /// Stores everything in `dir` (`--data DIR`); [`Registry::token`]
    /// then creates tokens there.
    pub fn data(mut self, dir: &Path) -> Serve {
        self.args.extend([OsString::from("--data"), dir.into()]);
        self.data = dir.to_path_buf();
        self
    }

    /// More `serve` flags (`--database URL`, `--config FILE`, limits...).
    pub fn args<S: Into<OsString>>(mut self, args: impl IntoIterator<Item = S>) -> Serve {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Discards the server's log.
    pub fn quiet(mut self) -> Serve {
        self.quiet = true;
        self
    }

    /// Sets the server's open-files limit to `limit` (`ulimit -n` in
    /// `/bin/sh`, then `exec`; where the hard limit is lower the server
    /// keeps that).
    pub fn open_files_limit(mut self, limit: u32) -> Serve {
        self.open_files_limit = Some(limit);
        self
    }

    /// Starts the server and waits for its address.
    pub fn start(&self) -> Registry {
        self.start_many(1).pop().expect("one server")
    }

    /// Starts `n` servers first and only then waits for their addresses,
    /// so that they start up (and migrate a shared database) at once.
    pub fn start_many(&self, n: usize) -> Vec<Registry> {
        // Owned by a `Registry` at once, so that a panic kills them all.
        let mut started: Vec<Registry> = (0..n)
            .map(|_| Registry {
                child: self.spawn(),
                url: String::new(),
                data: self.data.clone(),
                exe: self.exe.clone(),
            })
            .collect();
        for r in &mut started {
            r.url = listening_url(&mut r.child);
        }
        started
    }

    fn spawn(&self) -> Child {
        let mut cmd = match self.open_files_limit {
            None => Command::new(&self.exe),
            Some(limit) => {
                let mut sh = Command::new("/bin/sh");
                sh.arg("-c")
                    .arg(format!("ulimit -n {limit} 2>/dev/null; exec \"$0\" \"$@\""))
                    .arg(&self.exe);
                sh
            }
        };
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(if self.quiet {
                Stdio::null()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("spawn skillpm-registry")
    }
}

/// A running registry, SIGKILLed when dropped.
#[derive(Debug)]
pub struct Registry {
    pub child: Child,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub url: String,
    /// The `--data` directory ([`Serve::data`]); empty when the store was
    /// named otherwise.
    pub data: PathBuf,
    exe: PathBuf,
}

impl Registry {
    /// Creates an API token for `user` in the registry's data directory.
    pub fn token(&self, user: &str) -> String {
        assert!(
            !self.data.as_os_str().is_empty(),
            "started without --data: use token_in"
        );
        token_in(
            &self.exe,
            &[OsString::from("--data"), self.data.clone().into()],
            user,
        )
    }

    /// SIGKILL, and reap the process.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for the `listening on URL` line a spawned server prints first on
/// stdout, and keeps draining stdout after it so the server never blocks
/// on a full pipe.
pub fn listening_url(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("stdout");
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader.read_line(&mut line).expect("read address");
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .trim_end_matches('/')
        .to_string()
}

/// Creates an API token for `user` with `exe token create`, in the store
/// that `store` (flags such as `--data DIR` or `--database URL`) names.
pub fn token_in(exe: &Path, store: &[OsString], user: &str) -> String {
    let out = Command::new(exe)
        .args(["token", "create"])
        .args(store)
        .args(["--user", user])
        .output()
        .expect("token create");
    assert!(
        out.status.success(),
        "token create: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    assert!(t.starts_with("spm_") && t.len() == 68, "{t}");
    t
}
