fn main() -> std::process::ExitCode {
    pm_cli::run()
}
