"""The ``svc`` command: data management, the service, and operator commands.

Every subcommand group lives in its own module; this one only assembles them. Errors are one clear
line on stderr and a non-zero exit status.

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(main, ["--help"]).exit_code
    0
"""

from __future__ import annotations

import click

from svc_api.cli import (
    admin,
    admin_changelog,
    admin_community,
    admin_education,
    admin_exchange,
    admin_limits,
    admin_payments,
    admin_payouts,
    data,
    economic,
    openapi,
    serve,
    sweep,
    worker,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="svc")
def main() -> None:
    """svc: the backtest-and-signal platform."""


main.add_command(data.command)
main.add_command(serve.command)
main.add_command(admin.command)
for _command in (admin_community.leader, admin_community.reports, admin_community.moderator):
    admin.command.add_command(_command)
admin.command.add_command(admin_changelog.changelog)
admin.command.add_command(admin_exchange.exchange)
admin.command.add_command(admin_limits.rate_limit)
admin.command.add_command(admin_payments.payments)
admin.command.add_command(admin_education.edu)
admin_education.edu.add_command(admin_payouts.payout_run)
admin_education.edu.add_command(admin_payouts.payout_export)
admin_education.edu.add_command(admin_payouts.fx_rate)
main.add_command(sweep.command)
main.add_command(worker.command)
main.add_command(economic.command)
main.add_command(openapi.command)
