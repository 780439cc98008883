"""Expands an iCalendar feed (stdin) with python's recurring-ical-events.

Prints {"<UID>": ["YYYY-MM-DD", ...]}: the local start date of every occurrence that
starts between argv[1] and argv[2] (dates, inclusive), in the event's own zone; with
argv[3] "instants", each occurrence's UTC start and end instead ("<start>/<end>").
Exit code 3 when the module is missing, so that the test can say so and skip.
"""
import datetime
import json
import sys

try:
    import icalendar
    import recurring_ical_events
except ImportError as error:
    print(f"missing: {error}", file=sys.stderr)
    sys.exit(3)

def utc(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def instants(event):
    begin = event["DTSTART"].dt
    finish = event["DTEND"].dt if "DTEND" in event else begin + event["DURATION"].dt
    return f"{utc(begin)}/{utc(finish)}"


start = datetime.date.fromisoformat(sys.argv[1])
end = datetime.date.fromisoformat(sys.argv[2]) + datetime.timedelta(days=1)
# Wider than asked: the library reads date bounds in its own way; the local date decides below.
margin = datetime.timedelta(days=2)
calendar = icalendar.Calendar.from_ical(sys.stdin.buffer.read())
days = {}
for event in recurring_ical_events.of(calendar).between(start - margin, end + margin):
    begin = event["DTSTART"].dt
    day = begin.date() if isinstance(begin, datetime.datetime) else begin
    if start <= day < end:
        days.setdefault(str(event["UID"]), []).append(instants(event) if len(sys.argv) > 3 else day.isoformat())
print(json.dumps({uid: sorted(set(d)) for uid, d in days.items()}))
