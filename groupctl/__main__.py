"""Thin entry point: everything happens in groupctl.cli."""


def main() -> None:
    from groupctl import startup

    startup.hold()  # released once the command has imported what it needs: see startup.py
    from groupctl.cli.app import run

    run()


if __name__ == "__main__":
    main()
