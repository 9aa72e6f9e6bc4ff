"""Thin entry point: everything happens in groupctl.cli."""


def main() -> None:
    from groupctl.cli.app import run

    run()


if __name__ == "__main__":
    main()
