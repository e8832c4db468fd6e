#include "ledger/PostgresSchema.h"

#include "ledger/PostgresConnection.h"

#include <libpq-fe.h>

namespace taxicore {

namespace {

// A move's booking row, upserted (`bookings AS b`): the drop-off is kept unless given; car, state,
// time and rank only move forward (a higher rank), except an "arriving" of a car that is no longer
// the booking's (a reassign committed first). Decided by the car, not by time, as in SQLite: a wall
// clock stepped back must not reorder a booking's moves. The per-record function and the
// set-based batch must decide alike, so both take this one text (version 6; before, by time).
#define TAXICORE_MOVE_APPLIES                                                                                          \
    " EXCLUDED.state_rank > b.state_rank AND NOT (EXCLUDED.state = 'arriving' AND EXCLUDED.car_id <> 0"                \
    "  AND coalesce(b.car_id <> EXCLUDED.car_id, false))"
// Which moves the booking's row refuses, whichever node sent them (version 9): any move of an ended
// booking; a cancel, an expiry or a reassign of one whose ride began (on_trip), which only its
// completion may end; a pickup into a car that is no longer the booking's (a reassign committed
// first). Before, only the first: a pickup through one node and a cancel through another, at
// once, were both committed (the cancel a rank above on_trip), the rider in a car every node
// thought free; a pickup after a reassign put the booking back on its old car, the new one claimed.
#define TAXICORE_MOVE_REFUSED(rank, state, bookedCar, car)                                                             \
    "(" rank " >= 4 OR (" rank " >= 3 AND " state " IN ('cancelled', 'expired', 'assigned'))"                          \
    " OR (" state " = 'on_trip' AND " car " > 0 AND " bookedCar " IS NOT NULL AND " bookedCar " <> " car "))"
#define TAXICORE_MOVE_UPSERT_ON_CONFLICT                                                                               \
    "   ON CONFLICT (id) DO UPDATE SET"                                                                                \
    "    dropoff_lat = coalesce(EXCLUDED.dropoff_lat, b.dropoff_lat),"                                                 \
    "    dropoff_lng = coalesce(EXCLUDED.dropoff_lng, b.dropoff_lng),"                                                 \
    "    car_id = CASE WHEN" TAXICORE_MOVE_APPLIES " THEN coalesce(nullif(EXCLUDED.car_id, 0), b.car_id)"              \
    "     ELSE b.car_id END,"                                                                                          \
    "    state = CASE WHEN" TAXICORE_MOVE_APPLIES " THEN EXCLUDED.state ELSE b.state END,"                             \
    "    updated_ms = CASE WHEN" TAXICORE_MOVE_APPLIES " THEN EXCLUDED.updated_ms ELSE b.updated_ms END,"              \
    "    state_rank = CASE WHEN" TAXICORE_MOVE_APPLIES " THEN EXCLUDED.state_rank ELSE b.state_rank END;"

// A booking record under an id whose row holds another booking: one with its own creation time,
// rider or rider token. Ids are unique by construction (a node slot's range, the cluster's
// sequence), but a sequence dropped and made again, or two nodes in one slot, can hand an id out
// twice; that booking is refused (booking_id_taken: its node answers no 201 for it and takes
// another id) rather than replacing an acknowledged one. The same booking again (a batch replayed
// after a failed statement) has all three equal; a row a move created first (its booking's record
// not committed yet) has no creation time, and the booking fills it in.
#define TAXICORE_ANOTHER_BOOKING(row, created, rider, token)                                                           \
    "(" row ".created_ms IS NOT NULL AND (" row ".created_ms IS DISTINCT FROM " created " OR " row                     \
    ".rider_id IS DISTINCT FROM " rider " OR " row ".rider_token_hash IS DISTINCT FROM " token "))"

// A progress checkpoint `x` is newer than the row's (`row` is "b." or ""): by the time on board
// first, then by the booking's age (both monotonic: they grow through a wall-clock step; the age
// since schema 12), then by the wall clock. By the wall clock alone, a step back refused a ride's
// checkpoints for as long as the step (schema 11).
#define TAXICORE_PROGRESS_IS_NEWER(row)                                                                                \
    "(coalesce(" row "trip_elapsed_s, -1) < x.telapsed OR (coalesce(" row "trip_elapsed_s, -1) = x.telapsed"           \
    " AND (coalesce(" row "waited_s, -1) < x.waited OR (coalesce(" row "waited_s, -1) = x.waited"                      \
    " AND coalesce(" row "progress_ms, 0) <= x.at))))"

// A booking's row, upserted (`bookings AS b`) over the same booking only (TAXICORE_ANOTHER_BOOKING
// was refused before): what it was booked with is written, car, state and time only move forward,
// the drop-off is kept unless given. The per-record function and the set-based batch take this one text.
#define TAXICORE_BOOK_UPSERT_ON_CONFLICT                                                                               \
    "  ON CONFLICT (id) DO UPDATE SET rider_id = EXCLUDED.rider_id, rider_token_hash = EXCLUDED.rider_token_hash,"     \
    "   surge = EXCLUDED.surge, quote_total = EXCLUDED.quote_total, quote_base = EXCLUDED.quote_base,"                 \
    "   quote_distance = EXCLUDED.quote_distance, quote_time = EXCLUDED.quote_time,"                                   \
    "   quote_minimum = EXCLUDED.quote_minimum, quote_distance_m = EXCLUDED.quote_distance_m,"                         \
    "   quote_duration_s = EXCLUDED.quote_duration_s, pickup_lat = EXCLUDED.pickup_lat,"                               \
    "   pickup_lng = EXCLUDED.pickup_lng, dropoff_lat = coalesce(EXCLUDED.dropoff_lat, b.dropoff_lat),"                \
    "   dropoff_lng = coalesce(EXCLUDED.dropoff_lng, b.dropoff_lng),"                                                  \
    "   car_id = CASE WHEN EXCLUDED.state_rank > b.state_rank THEN EXCLUDED.car_id ELSE b.car_id END,"                 \
    "   state = CASE WHEN EXCLUDED.state_rank > b.state_rank THEN EXCLUDED.state ELSE b.state END,"                    \
    "   updated_ms = CASE WHEN EXCLUDED.state_rank > b.state_rank THEN EXCLUDED.updated_ms ELSE b.updated_ms END,"     \
    "   state_rank = greatest(b.state_rank, EXCLUDED.state_rank), created_ms = EXCLUDED.created_ms;"

// A new booking claims its car (the row's car when a move of it committed first), unless the
// booking already ended (its cancel committed first, from another process). Then the row. Refused
// under an id that holds another booking. Created by migration 1, replaced by migration 5.
// clang-format off
constexpr char kBookFunction[] =
    "FUNCTION taxicore_book(p_id bigint, p_rider text, p_car integer, p_pickup_lat double precision,"
    " p_pickup_lng double precision, p_dropoff_lat double precision, p_dropoff_lng double precision, p_state text,"
    " p_rank integer, p_created bigint, p_at bigint, p_token bytea, p_surge double precision,"
    " p_quote_total double precision, p_quote_base double precision, p_quote_distance double precision,"
    " p_quote_time double precision, p_quote_minimum double precision, p_quote_distance_m double precision,"
    " p_quote_duration_s double precision) RETURNS text LANGUAGE plpgsql AS $$"
    " DECLARE prior bookings%ROWTYPE; existed boolean; claim integer := p_car; refused text;"
    " BEGIN"
    "  SELECT * INTO prior FROM bookings WHERE id = p_id FOR UPDATE;"
    "  existed := FOUND;"
    "  IF existed AND " TAXICORE_ANOTHER_BOOKING("prior", "p_created", "p_rider", "p_token") " THEN"
    "   RETURN format('booking_id_taken: booking %s is another booking already', p_id);"
    "  END IF;"
    "  IF existed AND prior.state_rank >= p_rank AND coalesce(prior.car_id, 0) > 0 THEN"
    "   claim := prior.car_id;"
    "  END IF;"
    "  IF claim > 0 AND p_rank < 4 AND (NOT existed OR prior.state_rank < 4) THEN"
    "   refused := taxicore_claim_car(claim, p_id);"
    "   IF refused IS NOT NULL THEN RETURN refused; END IF;"
    "  END IF;"
    "  INSERT INTO bookings AS b (id, rider_id, car_id, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng, state,"
    "   state_rank, created_ms, updated_ms, rider_token_hash, surge, quote_total, quote_base, quote_distance,"
    "   quote_time, quote_minimum, quote_distance_m, quote_duration_s)"
    "  VALUES (p_id, p_rider, p_car, p_pickup_lat, p_pickup_lng, p_dropoff_lat, p_dropoff_lng, p_state, p_rank,"
    "   p_created, p_at, p_token, p_surge, p_quote_total, p_quote_base, p_quote_distance, p_quote_time,"
    "   p_quote_minimum, p_quote_distance_m, p_quote_duration_s)"
    TAXICORE_BOOK_UPSERT_ON_CONFLICT
    "  INSERT INTO transitions (booking_id, state, car_id, at_ms) VALUES (p_id, p_state, p_car, p_at);"
    "  RETURN '';"
    " END $$";
// clang-format on

// A move. Refused on a booking that already ended (another node moved it first: one wins).
// "assigned" is an operator's reassign: the new car is claimed with the same compare-and-swap and
// the old one released; it applies as in SQLite while the booking waits for a car (assigned or
// arriving), whatever its time (version 6; before, never when older than the row's last update,
// so a wall clock stepped back lost a reassign already acknowledged). An ending state releases the
// booking's car. A reassign of a booking with no record (none, or a row only a move made: its
// booking's commit never landed) is refused, booking_unknown: the car it would claim could never be
// freed (version 8). Created by migration 1, replaced by migrations 6 and 8.
// clang-format off
constexpr char kMoveFunction[] =
    "FUNCTION taxicore_move(p_id bigint, p_state text, p_rank integer, p_car integer, p_at bigint,"
    " p_dropoff_lat double precision, p_dropoff_lng double precision) RETURNS text LANGUAGE plpgsql AS $$"
    " DECLARE prior bookings%ROWTYPE; existed boolean; refused text;"
    " BEGIN"
    "  SELECT * INTO prior FROM bookings WHERE id = p_id FOR UPDATE;"
    "  existed := FOUND;"
    "  IF existed AND " TAXICORE_MOVE_REFUSED("prior.state_rank", "p_state", "prior.car_id", "p_car") " THEN"
    "   RETURN format('booking_moved: booking %s is already %s', p_id, prior.state);"
    "  END IF;"
    "  IF p_state = 'assigned' THEN"
    "   IF NOT existed OR prior.created_ms IS NULL THEN"
    "    RETURN format('booking_unknown: booking %s has no record to reassign', p_id);"
    "   END IF;"
    "   IF p_car > 0 AND (NOT existed OR (prior.state_rank <= 2 AND prior.car_id IS DISTINCT FROM p_car)) THEN"
    "    refused := taxicore_claim_car(p_car, p_id);"
    "    IF refused IS NOT NULL THEN RETURN refused; END IF;"
    "    UPDATE cars SET booking_id = NULL WHERE booking_id = p_id AND id <> p_car;"
    "   END IF;"
    "   INSERT INTO bookings AS b (id, car_id, state, state_rank, updated_ms) VALUES (p_id, p_car, 'assigned', 1, p_at)"
    "   ON CONFLICT (id) DO UPDATE SET"
    "    car_id = CASE WHEN b.state_rank <= 2 THEN EXCLUDED.car_id ELSE b.car_id END,"
    "    state = CASE WHEN b.state_rank <= 2 THEN 'assigned' ELSE b.state END,"
    "    state_rank = CASE WHEN b.state_rank <= 2 THEN 1 ELSE b.state_rank END,"
    "    updated_ms = CASE WHEN b.state_rank <= 2 THEN EXCLUDED.updated_ms ELSE b.updated_ms END;"
    "  ELSE"
    "   INSERT INTO bookings AS b (id, car_id, dropoff_lat, dropoff_lng, state, state_rank, updated_ms)"
    "   VALUES (p_id, p_car, p_dropoff_lat, p_dropoff_lng, p_state, p_rank, p_at)"
    TAXICORE_MOVE_UPSERT_ON_CONFLICT
    "   IF p_rank >= 4 THEN UPDATE cars SET booking_id = NULL WHERE booking_id = p_id; END IF;"
    "  END IF;"
    "  INSERT INTO transitions (booking_id, state, car_id, at_ms) VALUES (p_id, p_state, p_car, p_at);"
    "  RETURN '';"
    " END $$";
// clang-format on

// 1: the SQLite ledger's tables at its version 4 (bookings with owner, quote and checkpoint;
// transitions; trips with the fare breakdown; events), `cars` (the booking holding each car), and
// one function per record kind. Each function decides its record alone and writes nothing of it
// when it refuses, so a refusal never rolls back the other records of a group commit.
const QList<QByteArray> kMigration1 = {
    "CREATE TABLE bookings (id bigint PRIMARY KEY, rider_id text, car_id integer,"
    " pickup_lat double precision, pickup_lng double precision, dropoff_lat double precision,"
    " dropoff_lng double precision, state text NOT NULL, state_rank integer NOT NULL, created_ms bigint,"
    " updated_ms bigint, rider_token_hash bytea, surge double precision, quote_total double precision,"
    " quote_base double precision, quote_distance double precision, quote_time double precision,"
    " quote_minimum double precision, quote_distance_m double precision, quote_duration_s double precision,"
    " car_lat double precision, car_lng double precision, destination_lat double precision,"
    " destination_lng double precision, trip_distance_m double precision, trip_elapsed_s double precision,"
    " progress_ms bigint)",
    "CREATE INDEX bookings_open ON bookings (state_rank) WHERE state_rank < 4",
    "CREATE TABLE transitions (id bigserial PRIMARY KEY, booking_id bigint NOT NULL, state text NOT NULL,"
    " car_id integer, at_ms bigint NOT NULL)",
    "CREATE INDEX transitions_by_booking ON transitions (booking_id)",
    "CREATE TABLE trips (booking_id bigint PRIMARY KEY, car_id integer, rider_id text, started_ms bigint,"
    " ended_ms bigint, distance_m double precision, duration_s double precision, fare_total double precision,"
    " currency text, fare_base double precision, fare_distance double precision, fare_time double precision,"
    " fare_minimum double precision, fare_surge double precision NOT NULL DEFAULT 1.0)",
    "CREATE INDEX trips_by_end ON trips (ended_ms)",
    "CREATE TABLE events (id bigserial PRIMARY KEY, at_ms bigint NOT NULL, kind text NOT NULL, detail text,"
    " pid bigint)",
    "CREATE INDEX events_by_time ON events (at_ms)",
    "CREATE TABLE cars (id integer PRIMARY KEY, booking_id bigint)",
    "CREATE INDEX cars_by_booking ON cars (booking_id) WHERE booking_id IS NOT NULL",

    // The compare-and-swap of a car: taken by p_booking when free (or already its own).
    // Returns the refusal, or NULL when the car is the booking's now.
    "CREATE FUNCTION taxicore_claim_car(p_car integer, p_booking bigint) RETURNS text LANGUAGE plpgsql AS $$"
    " DECLARE holder bigint;"
    " BEGIN"
    "  INSERT INTO cars AS c (id, booking_id) VALUES (p_car, p_booking)"
    "   ON CONFLICT (id) DO UPDATE SET booking_id = EXCLUDED.booking_id"
    "   WHERE c.booking_id IS NULL OR c.booking_id = EXCLUDED.booking_id"
    "   RETURNING c.booking_id INTO holder;"
    "  IF FOUND THEN RETURN NULL; END IF;"
    "  SELECT c.booking_id INTO holder FROM cars c WHERE c.id = p_car;"
    "  RETURN format('car_taken: car %s is booked by booking %s', p_car, holder);"
    " END $$",

    QByteArray("CREATE ") + kBookFunction,

    QByteArray("CREATE ") + kMoveFunction,

    // A completed trip: refused on an ended booking; else the trip row (replacing one) and the
    // booking's "completed" move, which releases its car.
    "CREATE FUNCTION taxicore_trip(p_id bigint, p_car integer, p_rider text, p_started bigint, p_ended bigint,"
    " p_distance_m double precision, p_duration_s double precision, p_total double precision, p_currency text,"
    " p_base double precision, p_fare_distance double precision, p_fare_time double precision,"
    " p_minimum double precision, p_surge double precision) RETURNS text LANGUAGE plpgsql AS $$"
    " DECLARE prior bookings%ROWTYPE;"
    " BEGIN"
    "  SELECT * INTO prior FROM bookings WHERE id = p_id FOR UPDATE;"
    "  IF FOUND AND prior.state_rank >= 4 THEN"
    "   RETURN format('booking_moved: booking %s is already %s', p_id, prior.state);"
    "  END IF;"
    "  INSERT INTO trips (booking_id, car_id, rider_id, started_ms, ended_ms, distance_m, duration_s, fare_total,"
    "   currency, fare_base, fare_distance, fare_time, fare_minimum, fare_surge)"
    "  VALUES (p_id, p_car, p_rider, p_started, p_ended, p_distance_m, p_duration_s, p_total, p_currency, p_base,"
    "   p_fare_distance, p_fare_time, p_minimum, p_surge)"
    "  ON CONFLICT (booking_id) DO UPDATE SET car_id = EXCLUDED.car_id, rider_id = EXCLUDED.rider_id,"
    "   started_ms = EXCLUDED.started_ms, ended_ms = EXCLUDED.ended_ms, distance_m = EXCLUDED.distance_m,"
    "   duration_s = EXCLUDED.duration_s, fare_total = EXCLUDED.fare_total, currency = EXCLUDED.currency,"
    "   fare_base = EXCLUDED.fare_base, fare_distance = EXCLUDED.fare_distance, fare_time = EXCLUDED.fare_time,"
    "   fare_minimum = EXCLUDED.fare_minimum, fare_surge = EXCLUDED.fare_surge;"
    "  RETURN taxicore_move(p_id, 'completed', 4, p_car, p_ended, NULL, NULL);"
    " END $$",
};

// 2: the rows a group commit will write, locked first and always in one order (cars, then
// bookings, each by id), so two nodes' transactions that touch the same cars queue behind each
// other instead of deadlocking (a deadlock costs PostgreSQL's deadlock_timeout, 1 s by default,
// and the replay of both batches one record at a time). Cars never seen get their row here, in id
// order too, so no later claim has to insert one.
const QList<QByteArray> kMigration2 = {
    "CREATE OR REPLACE FUNCTION taxicore_lock_batch(p_cars integer[], p_bookings bigint[]) RETURNS void"
    " LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  INSERT INTO cars (id) SELECT DISTINCT c FROM unnest(p_cars) AS c WHERE c > 0 ORDER BY c"
    "   ON CONFLICT (id) DO NOTHING;"
    "  PERFORM 1 FROM cars WHERE id = ANY(p_cars) OR booking_id = ANY(p_bookings) ORDER BY id FOR UPDATE;"
    "  PERFORM 1 FROM bookings WHERE id = ANY(p_bookings) ORDER BY id FOR UPDATE;"
    " END $$",
};

// 3: the batch lock never scans a whole table. While the statistics say `bookings` is small (it
// was analyzed young), a sequential scan looks cheapest, the session keeps that plan, and until the
// next ANALYZE every commit reads every booking: a tenth of PostgreSQL's CPU in a 10 s booking
// benchmark, and in a test 111,016 rows read by 20 commits over a table of 5,308.
const QList<QByteArray> kMigration3 = {
    "ALTER FUNCTION taxicore_lock_batch(integer[], bigint[]) SET enable_seqscan = off",
};

// The group commit's one statement: see migration 4. Created by migration 4, replaced by migrations 5, 6, 7, 9, 11
// and 12.
// clang-format off
constexpr char kApplyBatchFunction[] =
    "FUNCTION taxicore_apply_batch(p_records json) RETURNS TABLE (record_at integer, refusal text)"
    " LANGUAGE plpgsql SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$"
    " DECLARE recs taxicore_record[]; verdicts text[]; waves integer; wave integer; one taxicore_record;"
    "  slow boolean; lost_at integer[]; lost_why text[]; n integer; has_book boolean; has_move boolean;"
    "  has_end boolean; has_alone boolean; has_progress boolean; has_event boolean; claim_at integer[];"
    "  claim_id bigint[]; claim_car integer[]; has_key boolean;"
    " BEGIN"
    "  SELECT coalesce(array_agg(j ORDER BY j.i), '{}') INTO recs"
    "   FROM json_populate_recordset(NULL::taxicore_record, p_records) j;"
    "  verdicts := array_fill(''::text, ARRAY[coalesce(array_length(recs, 1), 0)]);"
    "  PERFORM taxicore_lock_batch("
    "   ARRAY(SELECT x.car FROM unnest(recs) x WHERE x.k IN ('b', 'm', 't') AND x.car > 0),"
    "   ARRAY(SELECT x.id FROM unnest(recs) x WHERE x.k <> 'e'));"
    "  SELECT coalesce(max(x.w), 0), coalesce(bool_or(x.k = 'e'), false) INTO waves, has_event FROM unnest(recs) x;"
    "  IF has_event THEN"
    "   INSERT INTO events (at_ms, kind, detail, pid)"
    "    SELECT x.at, x.kind, x.detail, x.pid FROM unnest(recs) x WHERE x.k = 'e' ORDER BY x.i;"
    "  END IF;"
    "  FOR wave IN 1..waves LOOP"
    // What the wave holds: a statement with nothing to do still costs its executor's start.
    "   SELECT coalesce(bool_or(x.k = 'b'), false), coalesce(bool_or(x.k = 'm' AND x.state <> 'assigned'), false),"
    "    coalesce(bool_or(x.k = 'm' AND x.state <> 'assigned' AND x.rank >= 4), false),"
    "    coalesce(bool_or(x.k = 't' OR (x.k = 'm' AND x.state = 'assigned')), false), coalesce(bool_or(x.k = 'p'), "
    "false), coalesce(bool_or(x.k = 'b' AND x.keyed), false)"
    "    INTO has_book, has_move, has_end, has_alone, has_progress, has_key FROM unnest(recs) x WHERE x.w = wave;"
    // A booking that would keep the car a committed move gave it, not its own, or one under an id
    // that holds another booking (refused by taxicore_book; rare, so not set-based): the wave in order.
    "   slow := has_book AND EXISTS (SELECT 1 FROM unnest(recs) x"
    " JOIN LATERAL (SELECT b0.state, b0.state_rank, b0.created_ms, b0.car_id, b0.rider_id, b0.rider_token_hash"
    " FROM bookings b0 WHERE b0.id = x.id OFFSET 0) b ON true"
    "    WHERE x.w = wave AND x.k = 'b' AND ("
    TAXICORE_ANOTHER_BOOKING("b", "x.created", "x.rider", "decode(x.token, 'hex')")
    "     OR (x.rank < 4 AND b.state_rank < 4 AND b.state_rank >= x.rank AND coalesce(b.car_id, 0) > 0"
    "     AND b.car_id <> x.car)));"
    "   IF slow OR has_alone THEN"
    "    FOR one IN SELECT * FROM unnest(recs) x WHERE x.w = wave AND x.k <> 'e'"
    "     AND (slow OR x.k = 't' OR (x.k = 'm' AND x.state = 'assigned')) ORDER BY x.i LOOP"
    "     verdicts[one.i] := coalesce(taxicore_apply_one(one), '');"
    "    END LOOP;"
    "   END IF;"
    "   CONTINUE WHEN slow;"
    // Moves: refused on an ended booking; else the row as taxicore_move; an end frees the car.
    "   IF has_move THEN"
    "   SELECT coalesce(array_agg(x.i), '{}'),"
    "    coalesce(array_agg(format('booking_moved: booking %s is already %s', x.id, b.state)), '{}')"
    "    INTO lost_at, lost_why FROM unnest(recs) x"
    " JOIN LATERAL (SELECT b0.state, b0.state_rank, b0.created_ms, b0.car_id FROM bookings b0 WHERE b0.id = x.id "
    "OFFSET 0) b ON true"
    "    WHERE x.w = wave AND x.k = 'm' AND x.state <> 'assigned' AND " TAXICORE_MOVE_REFUSED("b.state_rank", "x.state", "b.car_id", "x.car") ";"
    "   FOR n IN 1..coalesce(array_length(lost_at, 1), 0) LOOP verdicts[lost_at[n]] := lost_why[n]; END LOOP;"
    "   INSERT INTO bookings AS b (id, car_id, dropoff_lat, dropoff_lng, state, state_rank, updated_ms)"
    "    SELECT x.id, x.car, x.dlat, x.dlng, x.state, x.rank, x.at FROM unnest(recs) x"
    "    WHERE x.w = wave AND x.k = 'm' AND x.state <> 'assigned' AND verdicts[x.i] = '' ORDER BY x.id"
    TAXICORE_MOVE_UPSERT_ON_CONFLICT
    "   END IF;"
    "   IF has_end THEN"
    "   UPDATE cars SET booking_id = NULL WHERE booking_id = ANY(ARRAY(SELECT x.id FROM unnest(recs) x"
    "    WHERE x.w = wave AND x.k = 'm' AND x.state <> 'assigned' AND x.rank >= 4 AND verdicts[x.i] = ''));"
    "   END IF;"
    // Bookings: the compare-and-swap of every car at once; the losers refused, naming the holder.
    "   IF has_book THEN"
    "   SELECT coalesce(array_agg(x.i ORDER BY x.car), '{}'), coalesce(array_agg(x.id ORDER BY x.car), '{}'),"
    "    coalesce(array_agg(x.car ORDER BY x.car), '{}') INTO claim_at, claim_id, claim_car FROM unnest(recs) x"
    " LEFT JOIN LATERAL (SELECT b0.state, b0.state_rank, b0.created_ms, b0.car_id FROM bookings b0 WHERE b0.id = x.id "
    "OFFSET 0) b ON true"
    "    WHERE x.w = wave AND x.k = 'b' AND x.car > 0 AND x.rank < 4"
    "     AND (b.state_rank IS NULL OR b.state_rank < 4);"
    "   INSERT INTO cars AS c (id, booking_id) SELECT t.car, t.id FROM unnest(claim_car, claim_id) AS t(car, id)"
    "    ON CONFLICT (id) DO UPDATE SET booking_id = EXCLUDED.booking_id"
    "    WHERE c.booking_id IS NULL OR c.booking_id = EXCLUDED.booking_id;"
    "   SELECT coalesce(array_agg(t.at), '{}'),"
    "    coalesce(array_agg(format('car_taken: car %s is booked by booking %s', t.car, c.booking_id)), '{}')"
    "    INTO lost_at, lost_why FROM unnest(claim_at, claim_id, claim_car) AS t(at, id, car)"
    "    JOIN cars c ON c.id = t.car WHERE c.booking_id IS DISTINCT FROM t.id;"
    "   FOR n IN 1..coalesce(array_length(lost_at, 1), 0) LOOP verdicts[lost_at[n]] := lost_why[n]; END LOOP;"
    // Keyed bookings (version 7) claim their Idempotency-Key: one booking per key, whichever node
    // committed first (ON CONFLICT waits for it); the losers are refused and their cars freed.
    "   IF has_key THEN"
    "   INSERT INTO idempotency_keys (token_hash, booking_id) SELECT decode(x.token, 'hex'), x.id FROM unnest(recs) x"
    "    WHERE x.w = wave AND x.k = 'b' AND x.keyed AND verdicts[x.i] = '' ORDER BY x.token, x.id"
    "    ON CONFLICT (token_hash) DO NOTHING;"
    "   SELECT coalesce(array_agg(x.i), '{}'),"
    "    coalesce(array_agg(format('booking_key_taken: its Idempotency-Key made booking %s', k.booking_id)), '{}')"
    "    INTO lost_at, lost_why FROM unnest(recs) x JOIN idempotency_keys k ON k.token_hash = decode(x.token, 'hex')"
    "    WHERE x.w = wave AND x.k = 'b' AND x.keyed AND verdicts[x.i] = '' AND k.booking_id <> x.id;"
    "   FOR n IN 1..coalesce(array_length(lost_at, 1), 0) LOOP verdicts[lost_at[n]] := lost_why[n]; END LOOP;"
    "   UPDATE cars SET booking_id = NULL WHERE booking_id = ANY(ARRAY(SELECT x.id FROM unnest(recs) x"
    "    WHERE x.w = wave AND x.k = 'b' AND x.keyed AND verdicts[x.i] LIKE 'booking_key_taken%'));"
    "   END IF;"
    "   INSERT INTO bookings AS b (id, rider_id, car_id, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng, state,"
    "    state_rank, created_ms, updated_ms, rider_token_hash, surge, quote_total, quote_base, quote_distance,"
    "    quote_time, quote_minimum, quote_distance_m, quote_duration_s)"
    "    SELECT x.id, x.rider, x.car, x.plat, x.plng, x.dlat, x.dlng, x.state, x.rank, x.created, x.at,"
    "     decode(x.token, 'hex'), x.surge, x.qtotal, x.qbase, x.qdist, x.qtime, x.qmin, x.qdm, x.qds"
    "    FROM unnest(recs) x WHERE x.w = wave AND x.k = 'b' AND verdicts[x.i] = '' ORDER BY x.id"
    TAXICORE_BOOK_UPSERT_ON_CONFLICT
    "   END IF;"
    // Progress checkpoints: only on an open booking, only newer than the stored one.
    "   IF has_progress THEN"
    "   UPDATE bookings b SET car_lat = x.clat, car_lng = x.clng, destination_lat = x.dlat, destination_lng = x.dlng,"
    "    trip_distance_m = x.tdist, trip_elapsed_s = x.telapsed, waited_s = x.waited, progress_ms = x.at"
    "    FROM unnest(recs) x"
    "    WHERE x.w = wave AND x.k = 'p' AND b.id = x.id AND b.state_rank < 4 AND " TAXICORE_PROGRESS_IS_NEWER("b.") ";"
    "   END IF;"
    "   IF has_book OR has_move THEN"
    "   INSERT INTO transitions (booking_id, state, car_id, at_ms)"
    "    SELECT x.id, x.state, x.car, x.at FROM unnest(recs) x WHERE x.w = wave"
    "     AND (x.k = 'b' OR (x.k = 'm' AND x.state <> 'assigned')) AND verdicts[x.i] = '' ORDER BY x.i;"
    "   END IF;"
    "  END LOOP;"
    "  RETURN QUERY SELECT t.at::integer, t.why FROM unnest(verdicts) WITH ORDINALITY AS t(why, at) WHERE t.why <> '';"
    " END $$";
// clang-format on

// One record through the functions of version 1: its verdict ('' written). A keyed booking claims
// its Idempotency-Key first and lets it go when taxicore_book refuses the booking. Created by
// migration 4, replaced by migrations 7 (the key), 11 and 12.
// clang-format off
constexpr char kApplyOneFunction[] =
    "FUNCTION taxicore_apply_one(x taxicore_record) RETURNS text LANGUAGE plpgsql AS $$"
    " DECLARE owner bigint; claimed bigint; verdict text;"
    " BEGIN"
    "  IF x.k = 'b' THEN"
    "   IF x.keyed THEN"
    "    INSERT INTO idempotency_keys (token_hash, booking_id) VALUES (decode(x.token, 'hex'), x.id)"
    "     ON CONFLICT (token_hash) DO NOTHING RETURNING booking_id INTO claimed;"
    "    SELECT k.booking_id INTO owner FROM idempotency_keys k WHERE k.token_hash = decode(x.token, 'hex');"
    "    IF owner IS DISTINCT FROM x.id THEN"
    "     RETURN format('booking_key_taken: its Idempotency-Key made booking %s', owner);"
    "    END IF;"
    "   END IF;"
    "   verdict := taxicore_book(x.id, x.rider, x.car, x.plat, x.plng, x.dlat, x.dlng, x.state, x.rank, x.created,"
    "    x.at, decode(x.token, 'hex'), x.surge, x.qtotal, x.qbase, x.qdist, x.qtime, x.qmin, x.qdm, x.qds);"
    // Only the claim this call made is let go: a row that named this id before (the booking
    // under an id handed out twice) belongs to the booking that holds the id.
    "   IF verdict <> '' AND claimed IS NOT NULL THEN"
    "    DELETE FROM idempotency_keys WHERE token_hash = decode(x.token, 'hex') AND booking_id = x.id;"
    "   END IF;"
    "   RETURN verdict;"
    "  ELSIF x.k = 'm' THEN"
    "   RETURN taxicore_move(x.id, x.state, x.rank, x.car, x.at, x.dlat, x.dlng);"
    "  ELSIF x.k = 't' THEN"
    "   RETURN taxicore_trip(x.id, x.car, x.rider, x.started, x.ended, x.dist, x.dur, x.total, x.currency,"
    "    x.fbase, x.fdist, x.ftime, x.fmin, x.fsurge);"
    "  ELSIF x.k = 'p' THEN"
    "   UPDATE bookings SET car_lat = x.clat, car_lng = x.clng, destination_lat = x.dlat, destination_lng = x.dlng,"
    "    trip_distance_m = x.tdist, trip_elapsed_s = x.telapsed, waited_s = x.waited, progress_ms = x.at"
    "    WHERE id = x.id AND state_rank < 4 AND " TAXICORE_PROGRESS_IS_NEWER("") ";"
    "  END IF;"
    "  RETURN '';"
    " END $$";
// clang-format on

// 4: a group commit is one statement, taxicore_apply_batch(json), which runs a number of SQL
// statements that grows with the waves of the batch, not with its records. The records come as one JSON array of
// taxicore_record rows, each with its position `i` (1..n), its kind `k` (b booking, m move, t trip,
// p progress, e event) and its wave `w`: the writer puts a record in a later wave than every earlier
// record of the same booking or car, so the records of one wave touch distinct bookings and cars
// and their order within it does not matter (a reassign, or a move or trip naming no car, whose
// released car is not known beforehand, opens a wave of its own). Per wave: the moves, their ends
// releasing cars, the compare-and-swap of every booking's car as one INSERT ... ON CONFLICT DO
// UPDATE ... WHERE free, the losers' refusals, the booking upserts, the progress checkpoints and the
// transitions, each one statement; reassigns and trips, and a wave where a booking keeps another car
// than its own (a move of it committed first), go through the functions of version 1 one record at
// a time. The rows are locked first, as before (taxicore_lock_batch). Answers the refused records
// only: (position, "car_taken: ..." or "booking_moved: ..."); the others were written. A booking
// is looked up by id alone (a lateral subquery behind OFFSET 0): with the filter on state_rank in
// the join, the planner picked the partial index bookings_open and read every open booking per record.
const QList<QByteArray> kMigration4 = {
    "CREATE TYPE taxicore_record AS (i integer, w integer, k text, id bigint, car integer, state text,"
    " rank integer, at bigint, created bigint, rider text, plat double precision, plng double precision,"
    " dlat double precision, dlng double precision, token text, surge double precision,"
    " qtotal double precision, qbase double precision, qdist double precision, qtime double precision,"
    " qmin double precision, qdm double precision, qds double precision, clat double precision,"
    " clng double precision, tdist double precision, telapsed double precision, started bigint, ended bigint,"
    " dist double precision, dur double precision, total double precision, currency text,"
    " fbase double precision, fdist double precision, ftime double precision, fmin double precision,"
    " fsurge double precision, kind text, detail text, pid bigint)",

    QByteArray("CREATE ") + kApplyOneFunction,

    QByteArray("CREATE ") + kApplyBatchFunction,
};

// 5: a booking under an id that holds another booking is refused (booking_id_taken), no longer
// upserted over it: a cluster sequence made again below ids already handed out gave one id to two
// riders, and the second silently replaced the first, acknowledged booking.
const QList<QByteArray> kMigration5 = {
    QByteArray("CREATE OR REPLACE ") + kBookFunction,
    QByteArray("CREATE OR REPLACE ") + kApplyBatchFunction,
};

// 6: a booking's moves are ordered by the car they name, not by wall-clock time (a reassign applies
// while the booking waits for a car; an arrival of a car no longer the booking's is void), so a
// clock stepped back on a node loses no acknowledged reassign.
const QList<QByteArray> kMigration6 = {
    QByteArray("CREATE OR REPLACE ") + kMoveFunction,
    QByteArray("CREATE OR REPLACE ") + kApplyBatchFunction,
};

// 7: which booking each Idempotency-Key made (by the hash of the rider token derived from the
// key, never the key), claimed in the booking's commit: the same POST sent twice at once, to two
// nodes, makes one booking; the other is refused (booking_key_taken) and answered with it.
// clang-format off
const QList<QByteArray> kMigration7 = {
    "CREATE TABLE idempotency_keys (token_hash bytea PRIMARY KEY, booking_id bigint NOT NULL)",
    "ALTER TYPE taxicore_record ADD ATTRIBUTE keyed boolean",
    QByteArray("CREATE OR REPLACE ") + kApplyOneFunction,
    QByteArray("CREATE OR REPLACE ") + kApplyBatchFunction,
};
// clang-format on

// 8: a reassign of a booking the ledger has no record of is refused (booking_unknown) instead of
// making a row that holds its new car for good (taxicore_move).
const QList<QByteArray> kMigration8 = {
    QByteArray("CREATE OR REPLACE ") + kMoveFunction,
};

// 9: a ride under way (on_trip) is neither cancelled nor expired nor reassigned, and a pickup into a
// car the booking was reassigned from is void: refused (booking_moved), as a move of an ended
// booking is (TAXICORE_MOVE_REFUSED, in taxicore_move and the set-based batch).
const QList<QByteArray> kMigration9 = {
    QByteArray("CREATE OR REPLACE ") + kMoveFunction,
    QByteArray("CREATE OR REPLACE ") + kApplyBatchFunction,
};

// 10: each batch's mark, written by the batch's own transaction with the records it refused: a
// writer that lost a commit's answer reads there whether it committed (PostgresCommitOutcome).
// Each writer deletes its own settled marks, and anyone's a day old (a writer that died leaves its
// last few, at most PostgresBatchWriter::kForgetEvery).
const QList<QByteArray> kMigration10 = {
    "CREATE TABLE taxicore_batch_outcomes (writer text NOT NULL, batch bigint NOT NULL, refusals json NOT NULL,"
    " written_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (writer, batch))",
};

// 11: a progress checkpoint is newer by the time on board first, then by the wall clock
// (TAXICORE_PROGRESS_IS_NEWER), in both functions that write one.
const QList<QByteArray> kMigration11 = {
    QByteArray("CREATE OR REPLACE ") + kApplyOneFunction,
    QByteArray("CREATE OR REPLACE ") + kApplyBatchFunction,
};

// 12: a progress checkpoint carries the booking's age on the monotonic clock (waited_s, simulated
// seconds since it was made), and is newer by it after the time on board: at a restart a waiting
// booking's age is that plus the wall-clock time since the checkpoint, so a wall-clock step before
// the checkpoint no longer expires it. Older rows keep NULL (their age: the wall clock's).
const QList<QByteArray> kMigration12 = {
    "ALTER TABLE bookings ADD COLUMN waited_s double precision",
    "ALTER TYPE taxicore_record ADD ATTRIBUTE waited double precision",
    QByteArray("CREATE OR REPLACE ") + kApplyOneFunction,
    QByteArray("CREATE OR REPLACE ") + kApplyBatchFunction,
};

const QList<QList<QByteArray>> kMigrations = {kMigration1, kMigration2,  kMigration3,  kMigration4,
                                              kMigration5, kMigration6,  kMigration7,  kMigration8,
                                              kMigration9, kMigration10, kMigration11, kMigration12};
#undef TAXICORE_MOVE_UPSERT_ON_CONFLICT
#undef TAXICORE_MOVE_REFUSED
#undef TAXICORE_MOVE_APPLIES
#undef TAXICORE_BOOK_UPSERT_ON_CONFLICT
#undef TAXICORE_ANOTHER_BOOKING
#undef TAXICORE_PROGRESS_IS_NEWER

// Read under the lock; -1 and *error on failure.
int readVersion(PostgresConnection &connection, QString *error)
{
    PgResult result = connection.exec("SELECT coalesce(max(version), 0) FROM taxicore_schema", PgParams(), error);
    if (!result)
        return -1;
    return QByteArray(PQgetvalue(result.get(), 0, 0)).toInt();
}

QString applyMigrations(PostgresConnection &connection, int from)
{
    for (int version = from + 1; version <= postgresSchemaVersion(); ++version) {
        const QString doing = QStringLiteral("migrating the schema to version %1").arg(version);
        for (const QByteArray &sql : postgresMigrationSteps(version)) {
            if (QString error = connection.run(sql, doing); !error.isEmpty())
                return error;
        }
    }
    return connection.run(QStringLiteral("DELETE FROM taxicore_schema; INSERT INTO taxicore_schema VALUES (%1)")
                              .arg(postgresSchemaVersion())
                              .toUtf8(),
                          QStringLiteral("recording the schema version"));
}

} // namespace

int postgresSchemaVersion()
{
    return int(kMigrations.size());
}

QList<QByteArray> postgresMigrationSteps(int version)
{
    return version >= 1 && version <= postgresSchemaVersion() ? kMigrations.at(version - 1) : QList<QByteArray>();
}

QString migratePostgresLedger(PostgresConnection &connection)
{
    // The lock first: CREATE TABLE IF NOT EXISTS alone still races (duplicate pg_type rows).
    QString error =
        connection.run(QStringLiteral("BEGIN; SELECT pg_advisory_xact_lock(%1, 0);"
                                      " CREATE TABLE IF NOT EXISTS taxicore_schema (version integer NOT NULL)")
                           .arg(kPostgresLockClass)
                           .toUtf8(),
                       QStringLiteral("locking the schema"));
    int version = error.isEmpty() ? readVersion(connection, &error) : -1;
    if (error.isEmpty() && version > postgresSchemaVersion())
        error = QStringLiteral("ledger PostgreSQL %1: schema version %2 is newer than this program's %3; "
                               "refusing to write to it")
                    .arg(connection.where())
                    .arg(version)
                    .arg(postgresSchemaVersion());
    if (error.isEmpty() && version < postgresSchemaVersion())
        error = applyMigrations(connection, version);
    if (error.isEmpty())
        error = connection.run("COMMIT", QStringLiteral("committing the schema"));
    if (!error.isEmpty() && connection.isOpen())
        connection.run("ROLLBACK", QStringLiteral("rolling back the schema"));
    return error;
}

} // namespace taxicore
