fn main() {
    println!("skillpm-registry {}", env!("CARGO_PKG_VERSION"));
}
