-- cadence.claim_emails served the sweeps and a claim by id with one statement whose filter held
-- both (`p_id is null or ...`). A SQL function's statement is planned without its arguments, so
-- neither branch could use its index: every claim read each pending row, and pending rows grow with
-- a mail outage (40,000 pending: 5.6 ms by id, 7.5 ms for a sweep that found none, measured; 0.1 ms
-- each with a statement per branch). Each branch is its own statement now: a sweep reads the due
-- rows through email_outbox_due_idx, a claim by id the primary key.

create or replace function cadence.claim_emails(p_now timestamptz, p_lease_seconds integer, p_limit integer, p_id uuid default null)
returns setof public.email_outbox
language plpgsql
volatile
set search_path = ''
as $$
begin
  -- The claim moves next_attempt_at one lease ahead, so no other worker takes the row while it is
  -- being sent; if this worker dies, the row is due again when the lease ends.
  if p_id is null then
    return query
      update public.email_outbox as o
      set attempts = o.attempts + 1,
          next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
      where o.id in (select d.id from public.email_outbox as d
                     where d.status = 'pending' and d.next_attempt_at <= p_now
                     order by d.next_attempt_at, d.id
                     limit p_limit
                     for update skip locked)
      returning o.*;
  else
    -- attempts = 0: no worker has claimed the row yet, so the request that queued it takes it
    -- before its due time (cadence.enqueue_request_email).
    return query
      update public.email_outbox as o
      set attempts = o.attempts + 1,
          next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
      where o.id in (select d.id from public.email_outbox as d
                     where d.id = p_id and d.status = 'pending' and (d.next_attempt_at <= p_now or d.attempts = 0)
                     limit p_limit
                     for update skip locked)
      returning o.*;
  end if;
end
$$;
