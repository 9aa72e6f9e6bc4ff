"""Thin entry point: everything happens in groupctl.cli."""


def main() -> None:
    from groupctl import startup

    startup.hold()  # released once the command has imported what it needs: see startup.py
    try:
        from groupctl.cli.app import run
    except KeyboardInterrupt:   # Ctrl-C while the CLI loads: as run() says it
        import sys

        sys.stderr.write("\ngroupctl: interrupted\n")
        sys.exit(130)
    run()


if __name__ == "__main__":
    main()
