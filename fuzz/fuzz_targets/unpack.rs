//! The hardened unpacker on arbitrary bytes, with small limits: never a
//! panic, and nothing but regular files and directories inside `dest`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillpm::archive::{unpack, Limits};

fuzz_target!(|data: &[u8]| {
    let Ok(tmp) = tempfile::tempdir() else {
        return;
    };
    let dest = tmp.path().join("out");
    let limits = Limits {
        max_compressed: 1 << 20,
        max_unpacked: 1 << 20,
        max_entries: 64,
        max_path_len: 256,
        // The strictest rules, so the fuzzer reaches every refusal.
        names: skillpm::platform::Platform::Windows,
    };
    if unpack(data, None, &dest, &limits).is_ok() {
        let mut stack = vec![dest.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
                let ft = e.file_type().expect("file_type");
                assert!(ft.is_dir() || ft.is_file(), "unpacked a {ft:?}");
                if ft.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    // Nothing escaped next to `dest`.
    let siblings: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("read_dir")
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "out")
        .collect();
    assert!(siblings.is_empty(), "wrote outside dest: {siblings:?}");
});
