-- E-mails to send, written in the same transaction as what they announce, delivered after commit.
-- A row stays pending until a mailer accepts it, so a crash or a mail outage loses nothing.

create table public.email_outbox (
  id uuid primary key default gen_random_uuid(),
  recipient text not null
    constraint outbox_recipient_is_an_email
      check (char_length(recipient) <= 254 and recipient ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  subject text not null constraint outbox_subject_is_not_blank check (btrim(subject) <> ''),
  text_body text not null,
  html_body text not null,
  status text not null default 'pending' constraint outbox_status_is_known check (status in ('pending', 'sent')),
  attempts integer not null default 0 constraint outbox_attempts_are_not_negative check (attempts >= 0),
  last_error text,
  next_attempt_at timestamptz not null default now(),
  sent_at timestamptz,
  created_at timestamptz not null default now(),
  constraint outbox_sent_rows_have_sent_at check ((status = 'sent') = (sent_at is not null))
);
comment on table public.email_outbox is
  'E-mails to deliver. Pending rows are retried with backoff from next_attempt_at; the bodies may hold license keys.';
comment on column public.email_outbox.next_attempt_at is
  'When the row may next be claimed: a claim pushes it one lease ahead, a failure one backoff ahead.';
create index email_outbox_due_idx on public.email_outbox (next_attempt_at) where status = 'pending';

alter table public.email_outbox enable row level security;
revoke all on public.email_outbox from anon, authenticated;

create function cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamptz)
returns uuid
language sql
volatile
set search_path = ''
as $$
  insert into public.email_outbox (recipient, subject, text_body, html_body, next_attempt_at)
  values (p_recipient, p_subject, p_text, p_html, p_now)
  returning id
$$;
comment on function cadence.enqueue_email(text, text, text, text, timestamptz) is
  'Queues an e-mail, due at once; call it inside the transaction that makes the e-mail true.';

create function cadence.claim_emails(p_now timestamptz, p_lease_seconds integer, p_limit integer, p_id uuid default null)
returns setof public.email_outbox
language sql
volatile
set search_path = ''
as $$
  -- The claim moves next_attempt_at one lease ahead, so no other worker takes the row while it is
  -- being sent; if this worker dies, the row is due again when the lease ends.
  update public.email_outbox as o
  set attempts = o.attempts + 1,
      next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
  where o.id in (select d.id from public.email_outbox as d
                 where d.status = 'pending'
                   and d.next_attempt_at <= p_now
                   and (p_id is null or d.id = p_id)
                 order by d.next_attempt_at, d.id
                 limit p_limit
                 for update skip locked)
  returning o.*
$$;
comment on function cadence.claim_emails(timestamptz, integer, integer, uuid) is
  'Claims up to p_limit due pending e-mails (only p_id when given) for p_lease_seconds; rows locked by another worker are skipped.';

create function cadence.mark_email_sent(p_id uuid, p_now timestamptz)
returns void
language sql
volatile
set search_path = ''
as $$
  update public.email_outbox set status = 'sent', sent_at = p_now where id = p_id and status = 'pending'
$$;
comment on function cadence.mark_email_sent(uuid, timestamptz) is 'Records that a mailer accepted the e-mail.';

create function cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamptz)
returns void
language sql
volatile
set search_path = ''
as $$
  update public.email_outbox
  set last_error = left(p_error, 1000), next_attempt_at = p_retry_at
  where id = p_id and status = 'pending'
$$;
comment on function cadence.mark_email_failed(uuid, text, timestamptz) is
  'Records a failed delivery: the row stays pending, due again at p_retry_at.';

revoke execute on function cadence.enqueue_email(text, text, text, text, timestamptz) from public;
revoke execute on function cadence.claim_emails(timestamptz, integer, integer, uuid) from public;
revoke execute on function cadence.mark_email_sent(uuid, timestamptz) from public;
revoke execute on function cadence.mark_email_failed(uuid, text, timestamptz) from public;
grant execute on function cadence.enqueue_email(text, text, text, text, timestamptz) to service_role;
grant execute on function cadence.claim_emails(timestamptz, integer, integer, uuid) to service_role;
grant execute on function cadence.mark_email_sent(uuid, timestamptz) to service_role;
grant execute on function cadence.mark_email_failed(uuid, text, timestamptz) to service_role;
