"""python -m qcheck --help: every argument of every subcommand says what it
does, and every option says its default (a value it has by default is
named, through argparse's %(default)s or written out)."""

import argparse
import subprocess
import sys

from qcheck.integrations.cli import parser

import adapters


def subcommands(top):
    """(name, parser) of each subcommand, the command line itself first."""
    found = [("python -m qcheck", top)]
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += sorted(action.choices.items())
    return found


def undocumented(top):
    """One line per argument whose help is missing, or an option whose help does not say its default."""
    problems = []
    for command, p in subcommands(top):
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if action.help == argparse.SUPPRESS:  # internal (a worker's own flags)
                continue
            name = f"{command} {'/'.join(action.option_strings) or action.dest}"
            text = (action.help or "").strip()
            if not text:
                problems.append(f"{name}: no help")
                continue
            has_default = action.default not in (None, False, argparse.SUPPRESS)
            if has_default and "%(default)" not in text and str(action.default) not in text:
                problems.append(f"{name}: its default {action.default!r} is not said")
            elif action.option_strings and "default" not in text:
                problems.append(f"{name}: does not say its default")
    return problems


def test_every_argument_of_every_subcommand_has_help_and_says_its_default():
    top = parser()
    assert [name for name, _ in subcommands(top)] == ["python -m qcheck", "campaign", "fuzz", "ops", "replay"]
    assert undocumented(top) == []


def test_the_check_finds_a_missing_help_and_an_unsaid_default():
    top = parser()
    fuzz = dict(subcommands(top))["fuzz"]
    fuzz.add_argument("--planted-no-help", type=int, default=3)
    fuzz.add_argument("--planted-no-default", type=int, default=7, help="a number")
    fuzz.add_argument("--planted-flag", action="store_true", help="a flag")
    assert undocumented(top) == ["fuzz --planted-no-help: no help",
                                 "fuzz --planted-no-default: its default 7 is not said",
                                 "fuzz --planted-flag: does not say its default"]


def test_help_prints_for_every_subcommand():
    for command in ([], ["fuzz"], ["replay"], ["campaign"]):
        done = subprocess.run([sys.executable, "-m", "qcheck", *command, "--help"], capture_output=True, text=True,
                              env=adapters.child_env())
        assert done.returncode == 0, done.stderr
        assert "usage: python -m qcheck" in done.stdout
    fuzz = subprocess.run([sys.executable, "-m", "qcheck", "fuzz", "--help"], capture_output=True, text=True,
                          env=adapters.child_env()).stdout
    assert "(default: 1.0" in fuzz and "default: tiny" in fuzz and "(default: 50)" in fuzz
