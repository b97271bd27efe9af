// Costs of single requests are fractions of a cent: below a cent they keep three significant digits
// ($0.0000345) where formatUsd would round them to $0.00.
import { formatUsd } from './ui.js';

const small = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 3 });

export const formatCost = (value: number | null | undefined) => (value !== null && value !== undefined && value > 0 && value < 0.01 ? small.format(value) : formatUsd(value));
