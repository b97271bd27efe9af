// Settings of spec §2.2 for features that are not built yet. They are declared so a typo or a bad
// value fails at boot like any other, and so config/example.env documents them; the app warns at
// boot when one of them is set explicitly, because nothing acts on it yet. Each moves beside its
// code when the feature lands.
import { defineSettings } from './settings.js';

export const plannedSettings = defineSettings({
  // A/B testing
  MODELGATE_AB_TESTING_ENABLED: { type: 'boolean', default: false, description: 'Split traffic between routing variants.' },
  MODELGATE_AB_TESTING_DURATION: { type: 'integer', default: 7, minimum: 1, description: 'Days an A/B test runs.' },
  MODELGATE_AB_TESTING_METRICS: { type: 'array', default: [], description: 'Metrics compared (cost, quality_score, user_satisfaction).' },
});

/** Defaults that are on but act on nothing yet are not worth a warning; an explicit value is. */
export const PLANNED = new Set(Object.keys(plannedSettings));
