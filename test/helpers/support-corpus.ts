/** A small customer-support corpus: one short source per topic, so queries have one clear best source. */
export const SUPPORT_CORPUS = [
  { id: 'refunds.md', title: 'Refunds', text: 'Refunds are paid to the original payment method within 14 days of the return arriving.' },
  { id: 'returns.md', title: 'Returns', text: 'Returns are accepted within 30 days with the receipt; refunds follow inspection.' },
  { id: 'shipping.md', title: 'Shipping', text: 'Shipping is free above 50 euros; express shipping costs 9 euros and takes one day.' },
  { id: 'giftcards.md', title: 'Gift cards', text: 'Gift cards are never refunded and do not expire; lost gift cards cannot be replaced.' },
  {
    id: 'warranty.md',
    title: 'Warranty',
    text: 'The warranty covers defects for two years; a defective item is repaired, replaced or refunded.',
  },
  { id: 'exchanges.md', title: 'Exchanges', text: 'Exchanges for another size are free; the return label is in the parcel.' },
  { id: 'privacy.md', title: 'Privacy', text: 'Payment details are stored by the payment provider, never by the shop.' },
  { id: 'loyalty.md', title: 'Loyalty', text: 'Loyalty points are removed when an order is refunded or returned.' },
];
