// The dashboard offers the event types an endpoint may take from its own list (no API lists them):
// it must be the gateway's catalogue, in its order, or the page would offer a type the API refuses.
import t from 'tap';
import { EVENT_TYPES as PAGE_TYPES } from '../../dashboard/src/pages/alerts/types.js';
import { EVENT_TYPES } from '../../plugins/events/catalogue.js';

t.same(PAGE_TYPES, EVENT_TYPES);
