package com.example.orders;

/** Authorizes each payment at the payment gateway before it is booked. */
final class PaymentHandler implements RecordHandler {
    private final PaymentGateway gateway;

    PaymentHandler(PaymentGateway gateway) {
        this.gateway = gateway;
    }

    @Override
    public void handle(byte[] value) throws Exception {
        gateway.authorize(value);
    }
}
